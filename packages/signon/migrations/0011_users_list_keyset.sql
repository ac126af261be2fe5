CREATE INDEX "user_permissions_application_idx" ON "signon"."user_permissions" USING btree ("application_id","permission","user_uid");--> statement-breakpoint
CREATE INDEX "users_list_name_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_role_idx" ON "signon"."users" USING btree ("role",lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_organisation_idx" ON "signon"."users" USING btree ("organisation_id",lower("name"),"uid") WHERE not "signon"."users"."is_api_user";--> statement-breakpoint
CREATE INDEX "users_list_suspended_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."suspended_at" is not null;--> statement-breakpoint
CREATE INDEX "users_list_invited_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."password_hash" is null;--> statement-breakpoint
CREATE INDEX "users_list_two_step_on_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE not "signon"."users"."is_api_user" and "signon"."users"."otp_enabled_at" is not null;--> statement-breakpoint
CREATE INDEX "users_locked_at_idx" ON "signon"."users" USING btree ("locked_at") WHERE "signon"."users"."locked_at" is not null;--> statement-breakpoint
CREATE INDEX "users_two_step_exempt_until_idx" ON "signon"."users" USING btree ("two_step_exempt_until") WHERE "signon"."users"."two_step_exempt_until" is not null;