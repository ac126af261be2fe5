ALTER TABLE "signon"."organisations" ADD COLUMN "two_step_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "two_step_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "two_step_exemption_reason" text;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD COLUMN "two_step_exempt_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD CONSTRAINT "users_two_step_exemption_check" CHECK (("signon"."users"."two_step_exemption_reason" is null) = ("signon"."users"."two_step_exempt_until" is null));