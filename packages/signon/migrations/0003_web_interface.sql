CREATE TABLE "signon"."account_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "account_links_purpose_check" CHECK ("signon"."account_links"."purpose" in ('invitation', 'password_reset'))
);
--> statement-breakpoint
CREATE TABLE "signon"."dev_mails" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"recipient" text NOT NULL,
	"subject" text NOT NULL,
	"text_body" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon"."password_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon"."remembered_browsers" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon"."settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "delegatable_permissions" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD COLUMN "awaiting_second_factor" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD COLUMN "flash" jsonb;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "last_signed_in_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "otp_secret_encrypted" text;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "otp_enabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "failed_otp_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "last_otp_step" bigint;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "password_changed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."account_links" ADD CONSTRAINT "account_links_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."password_history" ADD CONSTRAINT "password_history_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."remembered_browsers" ADD CONSTRAINT "remembered_browsers_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_links_user_idx" ON "signon"."account_links" USING btree ("user_uid");--> statement-breakpoint
CREATE INDEX "password_history_user_idx" ON "signon"."password_history" USING btree ("user_uid","created_at");--> statement-breakpoint
CREATE INDEX "remembered_browsers_user_idx" ON "signon"."remembered_browsers" USING btree ("user_uid");