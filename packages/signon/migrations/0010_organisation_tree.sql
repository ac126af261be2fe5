ALTER TABLE "signon"."users" DROP CONSTRAINT "users_role_check";--> statement-breakpoint
ALTER TABLE "signon"."organisations" ADD COLUMN "parent_id" uuid;--> statement-breakpoint
ALTER TABLE "signon"."organisations" ADD COLUMN "closed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."organisations" ADD CONSTRAINT "organisations_parent_id_organisations_id_fk" FOREIGN KEY ("parent_id") REFERENCES "signon"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "organisations_parent_idx" ON "signon"."organisations" USING btree ("parent_id");--> statement-breakpoint
ALTER TABLE "signon"."organisations" ADD CONSTRAINT "organisations_not_own_parent_check" CHECK ("signon"."organisations"."parent_id" <> "signon"."organisations"."id");--> statement-breakpoint
ALTER TABLE "signon"."users" ADD CONSTRAINT "users_role_check" CHECK ("signon"."users"."role" in ('superadmin', 'admin', 'super_organisation_admin', 'organisation_admin', 'normal'));