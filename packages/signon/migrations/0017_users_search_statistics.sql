-- The users list searches fragments of names and e-mail addresses (`ilike '%smith%'`). PostgreSQL estimates such a
-- pattern from the column's histogram once it has at least 100 entries, and the more entries, the closer: with the
-- default 100, a surname that 1 in 40 people have was estimated at 100 people in a million, so the list sorted all
-- 25,000 of them (and probed each one's permissions) instead of walking the names in order until a page was found.
-- 1,000 entries estimate it within a few per cent; ANALYZE reads 300,000 rows for them.
ALTER TABLE "signon"."users" ALTER COLUMN "name" SET STATISTICS 1000;--> statement-breakpoint
ALTER TABLE "signon"."users" ALTER COLUMN "email" SET STATISTICS 1000;--> statement-breakpoint
ANALYZE "signon"."users";
