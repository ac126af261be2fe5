CREATE SEQUENCE "signon"."push_sequence" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "signon"."push_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"seq" bigint NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"pending_since" timestamp with time zone NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_token" uuid,
	"lease_until" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "push_deliveries_kind_check" CHECK ("signon"."push_deliveries"."kind" in ('update', 'reauth')),
	CONSTRAINT "push_deliveries_status_check" CHECK ("signon"."push_deliveries"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "signon"."push_deliveries" ADD CONSTRAINT "push_deliveries_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."push_deliveries" ADD CONSTRAINT "push_deliveries_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "push_deliveries_user_application_kind_key" ON "signon"."push_deliveries" USING btree ("user_uid","application_id","kind");--> statement-breakpoint
CREATE INDEX "push_deliveries_due_idx" ON "signon"."push_deliveries" USING btree ("next_attempt_at","seq") WHERE "signon"."push_deliveries"."status" = 'pending';