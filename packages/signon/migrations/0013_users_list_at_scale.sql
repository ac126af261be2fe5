-- The trigram operator classes of the search indexes (a trusted extension: the database owner may create it).
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "push_deliveries_application_list_idx" ON "signon"."push_deliveries" USING btree ("application_id",(case "status" when 'failed' then 0 when 'pending' then 1 else 2 end),"updated_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "user_permissions_application_idx" ON "signon"."user_permissions" USING btree ("application_id","permission","user_uid");--> statement-breakpoint
CREATE INDEX "users_list_name_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_role_idx" ON "signon"."users" USING btree ("role",lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_organisation_idx" ON "signon"."users" USING btree ("organisation_id",lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_suspended_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."suspended_at" is not null;--> statement-breakpoint
CREATE INDEX "users_list_invited_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."password_hash" is null;--> statement-breakpoint
CREATE INDEX "users_list_two_step_on_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."otp_enabled_at" is not null;--> statement-breakpoint
CREATE INDEX "users_api_name_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_locked_at_idx" ON "signon"."users" USING btree ("locked_at") WHERE "signon"."users"."locked_at" is not null;--> statement-breakpoint
CREATE INDEX "users_name_trgm_idx" ON "signon"."users" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "users_email_trgm_idx" ON "signon"."users" USING gin ("email" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "users_two_step_exempt_until_idx" ON "signon"."users" USING btree ("two_step_exempt_until") WHERE "signon"."users"."two_step_exempt_until" is not null;