CREATE TABLE "signon"."sign_in_failures" (
	"email" text NOT NULL,
	"source" text NOT NULL,
	"kind" text NOT NULL,
	"failures" integer NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL,
	"blocked_until" timestamp with time zone,
	"last_failed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sign_in_failures_email_source_kind_pk" PRIMARY KEY("email","source","kind"),
	CONSTRAINT "sign_in_failures_kind_check" CHECK ("signon"."sign_in_failures"."kind" in ('password', 'two_step_code'))
);
--> statement-breakpoint
ALTER TABLE "signon"."account_links" DROP CONSTRAINT "account_links_purpose_check";--> statement-breakpoint
ALTER TABLE "signon"."users" DROP COLUMN "failed_password_attempts";--> statement-breakpoint
ALTER TABLE "signon"."users" DROP COLUMN "failed_otp_attempts";--> statement-breakpoint
ALTER TABLE "signon"."account_links" ADD CONSTRAINT "account_links_purpose_check" CHECK ("signon"."account_links"."purpose" in ('invitation', 'password_reset', 'unlock'));