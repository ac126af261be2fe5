CREATE TABLE "signon"."email_changes" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"new_email" text NOT NULL,
	"requested_by_uid" uuid,
	"expires_at" timestamp with time zone NOT NULL,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "signon"."email_changes" ADD CONSTRAINT "email_changes_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."email_changes" ADD CONSTRAINT "email_changes_requested_by_uid_users_uid_fk" FOREIGN KEY ("requested_by_uid") REFERENCES "signon"."users"("uid") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "email_changes_pending_user_key" ON "signon"."email_changes" USING btree ("user_uid") WHERE "signon"."email_changes"."confirmed_at" is null;