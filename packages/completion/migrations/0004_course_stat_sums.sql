CREATE TABLE "completion"."course_learner_buckets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "completion"."course_learner_buckets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"course_key" text NOT NULL,
	"bucket" integer NOT NULL,
	"learners" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "completion"."course_stat_sums" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "completion"."course_stat_sums_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"course_key" text NOT NULL,
	"cohorts" integer[] NOT NULL,
	"roles" text[] NOT NULL,
	"learners" bigint NOT NULL,
	"earned" numeric NOT NULL,
	"possible" numeric NOT NULL,
	"with_possible" bigint NOT NULL,
	"percent" numeric NOT NULL
);
--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD COLUMN "stat_cohorts" integer[] DEFAULT '{}'::integer[] NOT NULL;--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD COLUMN "stat_roles" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "course_learner_buckets_course_idx" ON "completion"."course_learner_buckets" USING btree ("course_key","bucket");--> statement-breakpoint
CREATE INDEX "course_stat_sums_course_idx" ON "completion"."course_stat_sums" USING btree ("course_key");--> statement-breakpoint
CREATE INDEX "enrollments_active_course_learner_idx" ON "completion"."enrollments" USING btree ("course_key","learner_id") WHERE "completion"."enrollments"."is_active";--> statement-breakpoint
-- The exact value of a double as numeric (float8::numeric rounds to 15 digits): every finite double is m × 2^e, which
-- is m × 5^-e / 10^-e when e < 0. Sums of these are exact, so they do not depend on the order rows are added in.
CREATE FUNCTION "completion"."exact_numeric"(x double precision) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  bits bigint;
  e integer;
  n integer;
  m numeric;
  p numeric := 1;
  b numeric;
  digits text;
  r numeric;
BEGIN
  IF x = trunc(x) AND abs(x) < 1e15 THEN RETURN x::bigint::numeric; END IF;
  -- Halves, quarters and other multiples of 2^-32 (below 2^21): scaling by 2^32 is exact, and 2^-32 has 32 decimals.
  IF abs(x) < 2097152 AND x * 4294967296 = trunc(x * 4294967296) THEN
    RETURN (x * 4294967296)::bigint::numeric * 0.00000000023283064365386962890625;
  END IF;
  bits := ('x' || encode(float8send(x), 'hex'))::bit(64)::bigint;
  e := ((bits >> 52) & 2047)::integer;
  IF e = 2047 THEN RAISE EXCEPTION 'not a finite number: %', x; END IF;
  m := (bits & 4503599627370495)::numeric;
  IF e = 0 THEN e := 1; ELSE m := m + 4503599627370496; END IF;
  e := e - 1075;
  b := CASE WHEN e >= 0 THEN 2 ELSE 5 END;
  n := abs(e);
  WHILE n > 0 LOOP
    IF n & 1 = 1 THEN p := p * b; END IF;
    b := b * b;
    n := n >> 1;
  END LOOP;
  IF e >= 0 THEN
    r := m * p;
  ELSE
    digits := (m * p)::text;
    IF length(digits) < 1 - e THEN digits := lpad(digits, 1 - e, '0'); END IF;
    r := (left(digits, length(digits) + e) || '.' || right(digits, -e))::numeric;
  END IF;
  RETURN CASE WHEN bits < 0 THEN -r ELSE r END;
END $$;
--> statement-breakpoint
-- The statistics group of every enrollment of some learners, as the triggers keep it: the ids of the course's cohorts
-- the learner belongs to and the learner's roles in the course, sorted. Only rows whose group changes are updated.
CREATE FUNCTION "completion"."refresh_stat_groups"(learner_ids integer[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "completion"."enrollments" e SET "stat_roles" = g.roles, "stat_cohorts" = g.cohorts
  FROM (
    SELECT x."course_key", x."learner_id",
      coalesce((SELECT array_agg(r."role" ORDER BY r."role" COLLATE "C") FROM "completion"."course_roles" r
                WHERE r."course_key" = x."course_key" AND r."learner_id" = x."learner_id"), '{}') AS roles,
      coalesce((SELECT array_agg(m."cohort_id" ORDER BY m."cohort_id") FROM "completion"."cohort_memberships" m
                INNER JOIN "completion"."cohorts" c ON c."id" = m."cohort_id"
                WHERE c."course_key" = x."course_key" AND m."learner_id" = x."learner_id"), '{}') AS cohorts
    FROM (SELECT DISTINCT unnest(learner_ids) AS "id") ids
    INNER JOIN "completion"."enrollments" x ON x."learner_id" = ids."id"
  ) g
  WHERE e."course_key" = g."course_key" AND e."learner_id" = g."learner_id"
    AND (e."stat_roles" IS DISTINCT FROM g.roles OR e."stat_cohorts" IS DISTINCT FROM g.cohorts);
END $$;
--> statement-breakpoint
-- Folds a course's delta rows into one row per group (and one per bucket), dropping groups that sum to nothing. Only
-- one transaction at a time does it per course (the others skip it), and only in READ COMMITTED, where rows folded by
-- a transaction that committed meanwhile are simply gone; readers see either the rows before or after.
CREATE FUNCTION "completion"."compact_course_sums"(p_course text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed'
     OR NOT pg_try_advisory_xact_lock(1668246896, hashtext(p_course)) THEN
    RETURN;
  END IF;
  WITH gone AS (DELETE FROM "completion"."course_stat_sums" WHERE "course_key" = p_course RETURNING *)
  INSERT INTO "completion"."course_stat_sums" ("course_key", "cohorts", "roles", "learners", "earned", "possible", "with_possible", "percent")
  SELECT p_course, "cohorts", "roles", sum("learners"), sum("earned"), sum("possible"), sum("with_possible"), sum("percent")
  FROM gone GROUP BY "cohorts", "roles"
  HAVING sum("learners") <> 0 OR sum("earned") <> 0 OR sum("possible") <> 0 OR sum("with_possible") <> 0 OR sum("percent") <> 0;
  WITH gone AS (DELETE FROM "completion"."course_learner_buckets" WHERE "course_key" = p_course RETURNING *)
  INSERT INTO "completion"."course_learner_buckets" ("course_key", "bucket", "learners")
  SELECT p_course, "bucket", sum("learners") FROM gone GROUP BY "bucket" HAVING sum("learners") <> 0;
END $$;
--> statement-breakpoint
-- One write in sixteen folds the delta rows of the courses it touched, so a course keeps a handful of rows.
CREATE FUNCTION "completion"."maybe_compact_course_sums"(course_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  k text;
BEGIN
  IF random() >= 0.0625 THEN RETURN; END IF;
  FOREACH k IN ARRAY course_keys LOOP
    PERFORM "completion"."compact_course_sums"(k);
  END LOOP;
END $$;
--> statement-breakpoint
-- Recomputes the sums of one course (null: every course) from its enrollments.
CREATE FUNCTION "completion"."rebuild_course_sums"(p_course text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "completion"."course_stat_sums" WHERE p_course IS NULL OR "course_key" = p_course;
  DELETE FROM "completion"."course_learner_buckets" WHERE p_course IS NULL OR "course_key" = p_course;
  INSERT INTO "completion"."course_stat_sums" ("course_key", "cohorts", "roles", "learners", "earned", "possible", "with_possible", "percent")
  SELECT "course_key", "stat_cohorts", "stat_roles", count(*),
    coalesce(sum("completion"."exact_numeric"("course_earned")), 0), coalesce(sum("completion"."exact_numeric"("course_possible")), 0),
    count("course_possible"), coalesce(sum("completion"."exact_numeric"("course_percent")), 0)
  FROM "completion"."enrollments" WHERE "is_active" AND (p_course IS NULL OR "course_key" = p_course)
  GROUP BY "course_key", "stat_cohorts", "stat_roles";
  INSERT INTO "completion"."course_learner_buckets" ("course_key", "bucket", "learners")
  SELECT "course_key", "learner_id" >> 10, count(*) FROM "completion"."enrollments"
  WHERE "is_active" AND (p_course IS NULL OR "course_key" = p_course)
  GROUP BY "course_key", "learner_id" >> 10;
END $$;
--> statement-breakpoint
-- A new enrollment starts in the group its learner's current roles and cohorts give.
CREATE FUNCTION "completion"."enrollment_stat_group"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW."stat_roles" := coalesce((SELECT array_agg(r."role" ORDER BY r."role" COLLATE "C") FROM "completion"."course_roles" r
    WHERE r."course_key" = NEW."course_key" AND r."learner_id" = NEW."learner_id"), '{}');
  NEW."stat_cohorts" := coalesce((SELECT array_agg(m."cohort_id" ORDER BY m."cohort_id") FROM "completion"."cohort_memberships" m
    INNER JOIN "completion"."cohorts" c ON c."id" = m."cohort_id"
    WHERE c."course_key" = NEW."course_key" AND m."learner_id" = NEW."learner_id"), '{}');
  RETURN NEW;
END $$;
--> statement-breakpoint
-- Adds a statement's new active enrollments to their course's sums.
CREATE FUNCTION "completion"."enrollment_sums_insert"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH d AS MATERIALIZED (SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent", 1 AS sign FROM new_rows WHERE "is_active"),
  sums AS (
    INSERT INTO "completion"."course_stat_sums" ("course_key", "cohorts", "roles", "learners", "earned", "possible", "with_possible", "percent")
    SELECT "course_key", "stat_cohorts", "stat_roles", sum(sign),
      coalesce(sum(sign * "completion"."exact_numeric"("course_earned")), 0),
      coalesce(sum(sign * "completion"."exact_numeric"("course_possible")), 0),
      sum(CASE WHEN "course_possible" IS NULL THEN 0 ELSE sign END),
      coalesce(sum(sign * "completion"."exact_numeric"("course_percent")), 0)
    FROM d GROUP BY "course_key", "stat_cohorts", "stat_roles"
  )
  INSERT INTO "completion"."course_learner_buckets" ("course_key", "bucket", "learners")
  SELECT "course_key", "learner_id" >> 10, sum(sign) FROM d GROUP BY "course_key", "learner_id" >> 10 HAVING sum(sign) <> 0;
  PERFORM "completion"."maybe_compact_course_sums"(array(SELECT DISTINCT "course_key" FROM new_rows));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Takes a statement's removed active enrollments out of their course's sums.
CREATE FUNCTION "completion"."enrollment_sums_delete"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH d AS MATERIALIZED (SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent", -1 AS sign FROM old_rows WHERE "is_active"),
  sums AS (
    INSERT INTO "completion"."course_stat_sums" ("course_key", "cohorts", "roles", "learners", "earned", "possible", "with_possible", "percent")
    SELECT "course_key", "stat_cohorts", "stat_roles", sum(sign),
      coalesce(sum(sign * "completion"."exact_numeric"("course_earned")), 0),
      coalesce(sum(sign * "completion"."exact_numeric"("course_possible")), 0),
      sum(CASE WHEN "course_possible" IS NULL THEN 0 ELSE sign END),
      coalesce(sum(sign * "completion"."exact_numeric"("course_percent")), 0)
    FROM d GROUP BY "course_key", "stat_cohorts", "stat_roles"
  )
  INSERT INTO "completion"."course_learner_buckets" ("course_key", "bucket", "learners")
  SELECT "course_key", "learner_id" >> 10, sum(sign) FROM d GROUP BY "course_key", "learner_id" >> 10 HAVING sum(sign) <> 0;
  PERFORM "completion"."maybe_compact_course_sums"(array(SELECT DISTINCT "course_key" FROM old_rows));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Moves a statement's changed enrollments: the old row out of the sums, the new one in (unchanged rows cancel out before any arithmetic).
CREATE FUNCTION "completion"."enrollment_sums_update"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH d AS MATERIALIZED (SELECT *, 1 AS sign FROM (SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent" FROM new_rows WHERE "is_active" EXCEPT ALL SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent" FROM old_rows WHERE "is_active") n
    UNION ALL
    SELECT *, -1 AS sign FROM (SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent" FROM old_rows WHERE "is_active" EXCEPT ALL SELECT "course_key", "learner_id", "stat_cohorts", "stat_roles", "course_earned", "course_possible", "course_percent" FROM new_rows WHERE "is_active") o),
  sums AS (
    INSERT INTO "completion"."course_stat_sums" ("course_key", "cohorts", "roles", "learners", "earned", "possible", "with_possible", "percent")
    SELECT "course_key", "stat_cohorts", "stat_roles", sum(sign),
      coalesce(sum(sign * "completion"."exact_numeric"("course_earned")), 0),
      coalesce(sum(sign * "completion"."exact_numeric"("course_possible")), 0),
      sum(CASE WHEN "course_possible" IS NULL THEN 0 ELSE sign END),
      coalesce(sum(sign * "completion"."exact_numeric"("course_percent")), 0)
    FROM d GROUP BY "course_key", "stat_cohorts", "stat_roles"
  )
  INSERT INTO "completion"."course_learner_buckets" ("course_key", "bucket", "learners")
  SELECT "course_key", "learner_id" >> 10, sum(sign) FROM d GROUP BY "course_key", "learner_id" >> 10 HAVING sum(sign) <> 0;
  PERFORM "completion"."maybe_compact_course_sums"(array(SELECT DISTINCT "course_key" FROM new_rows));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A change of course roles or cohort memberships moves the learners' enrollments to their new groups.
CREATE FUNCTION "completion"."learner_groups_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "completion"."refresh_stat_groups"(array(SELECT DISTINCT "learner_id" FROM new_rows));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "completion"."refresh_stat_groups"(array(SELECT DISTINCT "learner_id" FROM old_rows));
  ELSE
    PERFORM "completion"."refresh_stat_groups"(array(SELECT "learner_id" FROM new_rows UNION SELECT "learner_id" FROM old_rows));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A cohort moved to another course moves its members' enrollments (a deleted cohort's memberships go by cascade).
CREATE FUNCTION "completion"."cohort_moved"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "completion"."refresh_stat_groups"(array(
    SELECT DISTINCT m."learner_id" FROM "completion"."cohort_memberships" m
    WHERE m."cohort_id" IN (SELECT n."id" FROM new_rows n INNER JOIN old_rows o ON o."id" = n."id" WHERE o."course_key" IS DISTINCT FROM n."course_key")));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Enrollments stored before this migration: their groups, then every course's sums.
UPDATE "completion"."enrollments" e SET
  "stat_roles" = coalesce((SELECT array_agg(r."role" ORDER BY r."role" COLLATE "C") FROM "completion"."course_roles" r
    WHERE r."course_key" = e."course_key" AND r."learner_id" = e."learner_id"), '{}'),
  "stat_cohorts" = coalesce((SELECT array_agg(m."cohort_id" ORDER BY m."cohort_id") FROM "completion"."cohort_memberships" m
    INNER JOIN "completion"."cohorts" c ON c."id" = m."cohort_id"
    WHERE c."course_key" = e."course_key" AND m."learner_id" = e."learner_id"), '{}')
  WHERE EXISTS (SELECT 1 FROM "completion"."course_roles" r WHERE r."course_key" = e."course_key" AND r."learner_id" = e."learner_id")
     OR EXISTS (SELECT 1 FROM "completion"."cohort_memberships" m WHERE m."learner_id" = e."learner_id");--> statement-breakpoint
SELECT "completion"."rebuild_course_sums"(NULL);--> statement-breakpoint
CREATE TRIGGER "enrollments_stat_group" BEFORE INSERT ON "completion"."enrollments"
  FOR EACH ROW EXECUTE FUNCTION "completion"."enrollment_stat_group"();--> statement-breakpoint
CREATE TRIGGER "enrollments_sums_insert" AFTER INSERT ON "completion"."enrollments"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."enrollment_sums_insert"();--> statement-breakpoint
CREATE TRIGGER "enrollments_sums_update" AFTER UPDATE ON "completion"."enrollments"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."enrollment_sums_update"();--> statement-breakpoint
CREATE TRIGGER "enrollments_sums_delete" AFTER DELETE ON "completion"."enrollments"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."enrollment_sums_delete"();--> statement-breakpoint
CREATE TRIGGER "course_roles_insert" AFTER INSERT ON "completion"."course_roles"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "course_roles_update" AFTER UPDATE ON "completion"."course_roles"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "course_roles_delete" AFTER DELETE ON "completion"."course_roles"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "cohort_memberships_insert" AFTER INSERT ON "completion"."cohort_memberships"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "cohort_memberships_update" AFTER UPDATE ON "completion"."cohort_memberships"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "cohort_memberships_delete" AFTER DELETE ON "completion"."cohort_memberships"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."learner_groups_changed"();--> statement-breakpoint
CREATE TRIGGER "cohorts_update" AFTER UPDATE ON "completion"."cohorts"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "completion"."cohort_moved"();
