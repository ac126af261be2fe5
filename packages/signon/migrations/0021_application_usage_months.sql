CREATE TABLE "signon"."application_usage_months" (
	"application_id" uuid NOT NULL,
	"month" text NOT NULL,
	"users" integer NOT NULL,
	"sign_ins" integer NOT NULL,
	CONSTRAINT "application_usage_months_application_id_month_pk" PRIMARY KEY("application_id","month")
);
--> statement-breakpoint
ALTER TABLE "signon"."application_usage_months" ADD CONSTRAINT "application_usage_months_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;