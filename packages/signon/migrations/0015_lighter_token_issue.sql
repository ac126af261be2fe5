ALTER TABLE "signon"."access_tokens" DROP CONSTRAINT "access_tokens_user_uid_users_uid_fk";
--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" DROP CONSTRAINT "access_tokens_application_id_applications_id_fk";
--> statement-breakpoint
DROP INDEX "signon"."audit_events_actor_idx";--> statement-breakpoint
CREATE INDEX "audit_events_actor_idx" ON "signon"."audit_events" USING btree ("actor_uid","occurred_at") WHERE "signon"."audit_events"."actor_uid" is not null;