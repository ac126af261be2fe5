-- People without an organisation, by name, for the users list: beside a status's index (suspended, invited, …)
-- PostgreSQL reads both and keeps the people in each (a BitmapAnd), which it does only for partial indexes whose
-- predicates share no condition, hence no `not is_api_user` here. Built CONCURRENTLY: people go on signing in and
-- being changed while it is built (seconds at a million people).
CREATE INDEX CONCURRENTLY "users_without_organisation_idx" ON "signon"."users" USING btree (lower("name"),"uid") WHERE "signon"."users"."organisation_id" is null;
