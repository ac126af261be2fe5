ALTER TABLE "signon"."access_tokens" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "signon"."refresh_tokens" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" DROP CONSTRAINT "access_tokens_token_hash_unique";--> statement-breakpoint
ALTER TABLE "signon"."refresh_tokens" DROP CONSTRAINT "refresh_tokens_token_hash_unique";--> statement-breakpoint
DROP INDEX "signon"."access_tokens_user_idx";--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" ADD PRIMARY KEY ("token_hash");--> statement-breakpoint
ALTER TABLE "signon"."refresh_tokens" ADD PRIMARY KEY ("token_hash");
