ALTER TABLE "signon"."users" ADD COLUMN "unsuspended_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "new_password_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "inactivity_reminder_for" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "inactivity_reminder_days" integer;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "invitation_sent_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "audit_events_actor_idx" ON "signon"."audit_events" USING btree ("actor_uid","occurred_at");--> statement-breakpoint
CREATE INDEX "audit_events_occurred_idx" ON "signon"."audit_events" USING btree ("occurred_at");