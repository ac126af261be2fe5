CREATE TABLE "signon"."signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"sealed_private_jwk" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone,
	"publish_until" timestamp with time zone,
	CONSTRAINT "signing_keys_alg_check" CHECK ("signon"."signing_keys"."alg" in ('ES256', 'RS256'))
);
--> statement-breakpoint
ALTER TABLE "signon"."push_deliveries" DROP CONSTRAINT "push_deliveries_kind_check";--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "oidc_scopes" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "id_token_signed_response_alg" text DEFAULT 'ES256' NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "post_logout_redirect_uris" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD COLUMN "backchannel_logout_uri" text;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD COLUMN "scope" text;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD COLUMN "nonce" text;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD COLUMN "auth_time" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD COLUMN "amr" text[];--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD COLUMN "amr" text[] DEFAULT '{pwd}'::text[] NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_live_alg_key" ON "signon"."signing_keys" USING btree ("alg") WHERE "signon"."signing_keys"."retired_at" is null;--> statement-breakpoint
ALTER TABLE "signon"."applications" ADD CONSTRAINT "applications_id_token_alg_check" CHECK ("signon"."applications"."id_token_signed_response_alg" in ('ES256', 'RS256'));--> statement-breakpoint
ALTER TABLE "signon"."push_deliveries" ADD CONSTRAINT "push_deliveries_kind_check" CHECK ("signon"."push_deliveries"."kind" in ('update', 'reauth', 'logout'));