CREATE TABLE "signon"."identity_providers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organisation_id" uuid NOT NULL,
	"protocol" text NOT NULL,
	"domains" text[] NOT NULL,
	"issuer" text,
	"client_id" text,
	"client_authentication" text,
	"client_credential_sealed" text,
	"client_key_id" text,
	"client_certificate" text,
	"scopes" text DEFAULT 'openid email profile' NOT NULL,
	"saml_entity_id" text,
	"saml_sign_on_url" text,
	"saml_logout_url" text,
	"saml_certificates" text[],
	"password_addresses" text[] DEFAULT '{}'::text[] NOT NULL,
	"create_accounts" boolean DEFAULT false NOT NULL,
	"second_factor_contexts" text[] DEFAULT '{}'::text[] NOT NULL,
	"suspend_unseen_days" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "identity_providers_organisation_id_unique" UNIQUE("organisation_id"),
	CONSTRAINT "identity_providers_protocol_check" CHECK ("signon"."identity_providers"."protocol" in ('oidc', 'saml'))
);
--> statement-breakpoint
CREATE TABLE "signon"."upstream_identities" (
	"provider_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"user_uid" uuid NOT NULL,
	"linked_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "upstream_identities_provider_id_subject_pk" PRIMARY KEY("provider_id","subject")
);
--> statement-breakpoint
CREATE TABLE "signon"."upstream_messages_seen" (
	"provider_id" uuid NOT NULL,
	"message_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "upstream_messages_seen_provider_id_message_id_pk" PRIMARY KEY("provider_id","message_id")
);
--> statement-breakpoint
CREATE TABLE "signon"."upstream_sign_ins" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"provider_id" uuid NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text,
	"email" text NOT NULL,
	"return_to" text NOT NULL,
	"answer" jsonb,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD COLUMN "upstream_provider_id" uuid;--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD COLUMN "upstream_session_id" text;--> statement-breakpoint
ALTER TABLE "signon"."identity_providers" ADD CONSTRAINT "identity_providers_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "signon"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."upstream_identities" ADD CONSTRAINT "upstream_identities_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "signon"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."upstream_identities" ADD CONSTRAINT "upstream_identities_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."upstream_messages_seen" ADD CONSTRAINT "upstream_messages_seen_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "signon"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."upstream_sign_ins" ADD CONSTRAINT "upstream_sign_ins_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "signon"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "upstream_identities_user_idx" ON "signon"."upstream_identities" USING btree ("user_uid","provider_id");--> statement-breakpoint
CREATE INDEX "upstream_messages_seen_expiry_idx" ON "signon"."upstream_messages_seen" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "upstream_sign_ins_expiry_idx" ON "signon"."upstream_sign_ins" USING btree ("expires_at");