CREATE TABLE "signon"."renewed_tokens" (
	"grant_id" uuid PRIMARY KEY NOT NULL,
	"replaces_grant_id" uuid NOT NULL,
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"token_sealed" text,
	"acknowledged_at" timestamp with time zone,
	"acknowledged_by" uuid,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "renewed_tokens_replaces_grant_id_unique" UNIQUE("replaces_grant_id")
);
--> statement-breakpoint
CREATE TABLE "signon"."user_application_syncs" (
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"last_synced_at" timestamp with time zone NOT NULL,
	"last_synced_by" text NOT NULL,
	CONSTRAINT "user_application_syncs_user_uid_application_id_pk" PRIMARY KEY("user_uid","application_id"),
	CONSTRAINT "user_application_syncs_by_check" CHECK ("signon"."user_application_syncs"."last_synced_by" in ('user_json', 'push'))
);
--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "api_only" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "push_enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "default_permissions" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "permissions_not_grantable_in_ui" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "token_auto_renewal" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."renewed_tokens" ADD CONSTRAINT "renewed_tokens_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "signon"."grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."renewed_tokens" ADD CONSTRAINT "renewed_tokens_replaces_grant_id_grants_id_fk" FOREIGN KEY ("replaces_grant_id") REFERENCES "signon"."grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."renewed_tokens" ADD CONSTRAINT "renewed_tokens_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."renewed_tokens" ADD CONSTRAINT "renewed_tokens_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."user_application_syncs" ADD CONSTRAINT "user_application_syncs_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."user_application_syncs" ADD CONSTRAINT "user_application_syncs_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_events_sign_in_idx" ON "signon"."audit_events" USING btree ("application_id","occurred_at") WHERE "signon"."audit_events"."action" = 'authorization_code_issued';