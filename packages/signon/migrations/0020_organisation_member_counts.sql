-- How many users each organisation has, kept exact as users are added, moved and removed, so the organisations
-- pages read it rather than count a million people per request. Statement-level triggers with transition tables:
-- one update per organisation touched, whatever the number of rows a statement changes; an update of users that
-- moves nobody between organisations (a sign-in, say) touches no organisation. The organisations a statement
-- touches are locked in the order of their ids first, so two statements moving people in opposite directions wait
-- for each other rather than deadlock.
ALTER TABLE "signon"."organisations" ADD COLUMN "member_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Writes to users wait for the count below and the triggers, so none is counted twice or missed.
LOCK TABLE "signon"."users" IN SHARE MODE;--> statement-breakpoint
CREATE FUNCTION signon.count_members_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM signon.organisations AS o WHERE o.id IN (SELECT organisation_id FROM added_users) ORDER BY o.id FOR NO KEY UPDATE;
  UPDATE signon.organisations AS o SET member_count = o.member_count + added.n
    FROM (SELECT organisation_id, count(*)::int AS n FROM added_users WHERE organisation_id IS NOT NULL GROUP BY organisation_id) AS added
   WHERE o.id = added.organisation_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION signon.count_members_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM signon.organisations AS o WHERE o.id IN (SELECT organisation_id FROM removed_users) ORDER BY o.id FOR NO KEY UPDATE;
  UPDATE signon.organisations AS o SET member_count = o.member_count - removed.n
    FROM (SELECT organisation_id, count(*)::int AS n FROM removed_users WHERE organisation_id IS NOT NULL GROUP BY organisation_id) AS removed
   WHERE o.id = removed.organisation_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION signon.count_members_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM signon.organisations AS o
    WHERE o.id IN (SELECT r.organisation_id FROM removed_users AS r JOIN added_users AS a USING (uid)
                    WHERE r.organisation_id IS DISTINCT FROM a.organisation_id
                   UNION SELECT a.organisation_id FROM removed_users AS r JOIN added_users AS a USING (uid)
                    WHERE r.organisation_id IS DISTINCT FROM a.organisation_id)
    ORDER BY o.id FOR NO KEY UPDATE;
  UPDATE signon.organisations AS o SET member_count = o.member_count + moved.n
    FROM (SELECT organisation_id, sum(n)::int AS n
            FROM (SELECT organisation_id, -1 AS n FROM removed_users UNION ALL SELECT organisation_id, 1 AS n FROM added_users) AS changes
           WHERE organisation_id IS NOT NULL
           GROUP BY organisation_id
          HAVING sum(n) <> 0) AS moved
   WHERE o.id = moved.organisation_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION signon.count_members_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE signon.organisations SET member_count = 0 WHERE member_count <> 0;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER users_count_members_added AFTER INSERT ON signon.users
  REFERENCING NEW TABLE AS added_users FOR EACH STATEMENT EXECUTE FUNCTION signon.count_members_added();--> statement-breakpoint
CREATE TRIGGER users_count_members_removed AFTER DELETE ON signon.users
  REFERENCING OLD TABLE AS removed_users FOR EACH STATEMENT EXECUTE FUNCTION signon.count_members_removed();--> statement-breakpoint
CREATE TRIGGER users_count_members_moved AFTER UPDATE ON signon.users
  REFERENCING OLD TABLE AS removed_users NEW TABLE AS added_users FOR EACH STATEMENT EXECUTE FUNCTION signon.count_members_moved();--> statement-breakpoint
CREATE TRIGGER users_count_members_emptied AFTER TRUNCATE ON signon.users
  FOR EACH STATEMENT EXECUTE FUNCTION signon.count_members_emptied();--> statement-breakpoint
UPDATE signon.organisations AS o SET member_count = counted.n
  FROM (SELECT organisation_id, count(*)::int AS n FROM signon.users WHERE organisation_id IS NOT NULL GROUP BY organisation_id) AS counted
 WHERE o.id = counted.organisation_id;
