-- Every Sign-on process keeps the answers of access-token lookups (/user.json, introspection, userinfo) in memory.
-- These triggers tell it when a change may alter such an answer, whoever made it (Sign-on, another instance, plain SQL):
-- a notification on the channel signon_token_answers for every listening process once the change commits,
-- and a notice to the connection that made it, which its own process acts on as soon as the statement ends.
-- Each trigger passes the query that tells whether the statement changed anything that matters; none means always.
CREATE FUNCTION "signon"."token_answers_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  relevant boolean;
BEGIN
  IF TG_NARGS = 0 THEN
    relevant := true;
  ELSE
    EXECUTE 'select exists (' || TG_ARGV[0] || ')' INTO relevant;
  END IF;
  IF relevant THEN
    PERFORM pg_notify('signon_token_answers', '');
    RAISE NOTICE 'signon_token_answers_changed';
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "users_token_answers" AFTER UPDATE ON "signon"."users" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select 1 from old_rows o join new_rows n using (uid) where (o.name, o.email, o.suspended_at, o.organisation_id) is distinct from (n.name, n.email, n.suspended_at, n.organisation_id)');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_added_token_answers" AFTER INSERT ON "signon"."user_permissions" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from new_rows');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_changed_token_answers" AFTER UPDATE ON "signon"."user_permissions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_removed_token_answers" AFTER DELETE ON "signon"."user_permissions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "access_tokens_token_answers" AFTER UPDATE ON "signon"."access_tokens" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select 1 from old_rows o join new_rows n using (token_hash) where (o.revoked_at, o.expires_at, o.user_uid, o.application_id) is distinct from (n.revoked_at, n.expires_at, n.user_uid, n.application_id)');
--> statement-breakpoint
CREATE TRIGGER "access_tokens_removed_token_answers" AFTER DELETE ON "signon"."access_tokens" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "applications_token_answers" AFTER UPDATE ON "signon"."applications" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select 1 from old_rows o join new_rows n using (id) where (o.client_id, o.retired) is distinct from (n.client_id, n.retired)');
--> statement-breakpoint
CREATE TRIGGER "applications_removed_token_answers" AFTER DELETE ON "signon"."applications" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "organisations_token_answers" AFTER UPDATE ON "signon"."organisations" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select 1 from old_rows o join new_rows n using (id) where (o.slug, o.content_id) is distinct from (n.slug, n.content_id)');
--> statement-breakpoint
CREATE TRIGGER "users_truncated_token_answers" AFTER TRUNCATE ON "signon"."users" FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"();
--> statement-breakpoint
CREATE TRIGGER "user_permissions_truncated_token_answers" AFTER TRUNCATE ON "signon"."user_permissions" FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"();
--> statement-breakpoint
CREATE TRIGGER "access_tokens_truncated_token_answers" AFTER TRUNCATE ON "signon"."access_tokens" FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"();
--> statement-breakpoint
CREATE TRIGGER "applications_truncated_token_answers" AFTER TRUNCATE ON "signon"."applications" FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"();
--> statement-breakpoint
CREATE TRIGGER "organisations_truncated_token_answers" AFTER TRUNCATE ON "signon"."organisations" FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"();
