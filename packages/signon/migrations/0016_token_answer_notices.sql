-- Every Sign-on process keeps the answers of access-token lookups (/user.json, introspection, userinfo) in memory.
-- These triggers tell it when a change may alter such an answer, whoever made it (Sign-on, another instance, plain SQL):
-- a notification on the channel signon_token_answers for every listening process once the change commits,
-- and a notice to the connection that made it, which its own process acts on as soon as the statement ends.
-- Each trigger passes the query that tells whether the statement changed anything that matters; none means always.
-- What skips triggers (session_replication_role = replica, pg_restore --disable-triggers, logical replication
-- applying changes) reaches no process: restart Sign-on after such a change, or set SIGNON_TOKEN_CACHE_SIZE=0.
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
    'select uid, name, email, suspended_at, organisation_id from old_rows except select uid, name, email, suspended_at, organisation_id from new_rows');
--> statement-breakpoint
CREATE TRIGGER "users_removed_token_answers" AFTER DELETE ON "signon"."users" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_added_token_answers" AFTER INSERT ON "signon"."user_permissions" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from new_rows');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_changed_token_answers" AFTER UPDATE ON "signon"."user_permissions" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select user_uid, application_id, permission from old_rows except select user_uid, application_id, permission from new_rows');
--> statement-breakpoint
CREATE TRIGGER "user_permissions_removed_token_answers" AFTER DELETE ON "signon"."user_permissions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "access_tokens_token_answers" AFTER UPDATE ON "signon"."access_tokens" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select token_hash, revoked_at, expires_at, user_uid, application_id, created_at from old_rows except select token_hash, revoked_at, expires_at, user_uid, application_id, created_at from new_rows');
--> statement-breakpoint
-- A revoked token has no kept answer (its revocation made every process forget), so deleting it forgets nothing.
CREATE TRIGGER "access_tokens_removed_token_answers" AFTER DELETE ON "signon"."access_tokens" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows where revoked_at is null');
--> statement-breakpoint
CREATE TRIGGER "applications_token_answers" AFTER UPDATE ON "signon"."applications" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select id, client_id, retired from old_rows except select id, client_id, retired from new_rows');
--> statement-breakpoint
CREATE TRIGGER "applications_removed_token_answers" AFTER DELETE ON "signon"."applications" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
--> statement-breakpoint
CREATE TRIGGER "organisations_token_answers" AFTER UPDATE ON "signon"."organisations" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"(
    'select id, slug, content_id from old_rows except select id, slug, content_id from new_rows');
--> statement-breakpoint
CREATE TRIGGER "organisations_removed_token_answers" AFTER DELETE ON "signon"."organisations" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "signon"."token_answers_changed"('select 1 from old_rows');
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
