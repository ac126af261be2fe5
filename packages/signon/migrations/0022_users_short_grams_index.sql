-- The index of every character and pair of adjacent characters of each person's name and e-mail address (the
-- function of 0019), built CONCURRENTLY: sign-ins, invitations and administrators' changes go on writing users while
-- it is built (minutes at a million people). ANALYZE then gives PostgreSQL the statistics of its expression, from
-- which the users list estimates how many people hold a short text.
CREATE INDEX CONCURRENTLY "users_short_grams_idx" ON "signon"."users" USING gin (signon.short_grams("name", "email"));--> statement-breakpoint
ANALYZE "signon"."users";
