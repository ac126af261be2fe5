CREATE TABLE "signon"."invitation_batch_rows" (
	"batch_id" uuid NOT NULL,
	"line" integer NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"organisation" text,
	"outcome" text DEFAULT 'pending' NOT NULL,
	"reason" text,
	"user_uid" uuid,
	"processed_at" timestamp with time zone,
	CONSTRAINT "invitation_batch_rows_batch_id_line_pk" PRIMARY KEY("batch_id","line"),
	CONSTRAINT "invitation_batch_rows_outcome_check" CHECK ("signon"."invitation_batch_rows"."outcome" in ('pending', 'invited', 'exists', 'invalid'))
);
--> statement-breakpoint
CREATE TABLE "signon"."invitation_batches" (
	"id" uuid PRIMARY KEY NOT NULL,
	"created_by_uid" uuid,
	"role" text NOT NULL,
	"organisation_id" uuid,
	"permissions" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "signon"."invitation_permissions" (
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"permission" text NOT NULL,
	"invited_by_uid" uuid,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "invitation_permissions_user_uid_application_id_permission_pk" PRIMARY KEY("user_uid","application_id","permission")
);
--> statement-breakpoint
ALTER TABLE "signon"."invitation_batch_rows" ADD CONSTRAINT "invitation_batch_rows_batch_id_invitation_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "signon"."invitation_batches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_batch_rows" ADD CONSTRAINT "invitation_batch_rows_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_batches" ADD CONSTRAINT "invitation_batches_created_by_uid_users_uid_fk" FOREIGN KEY ("created_by_uid") REFERENCES "signon"."users"("uid") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_batches" ADD CONSTRAINT "invitation_batches_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "signon"."organisations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_permissions" ADD CONSTRAINT "invitation_permissions_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_permissions" ADD CONSTRAINT "invitation_permissions_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."invitation_permissions" ADD CONSTRAINT "invitation_permissions_invited_by_uid_users_uid_fk" FOREIGN KEY ("invited_by_uid") REFERENCES "signon"."users"("uid") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invitation_batch_rows_pending_idx" ON "signon"."invitation_batch_rows" USING btree ("batch_id","line") WHERE "signon"."invitation_batch_rows"."outcome" = 'pending';