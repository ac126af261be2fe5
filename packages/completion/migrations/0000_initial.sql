CREATE SCHEMA "completion";
--> statement-breakpoint
CREATE TABLE "completion"."aggregates" (
	"course_key" text NOT NULL,
	"learner_id" integer NOT NULL,
	"block_key" text NOT NULL,
	"aggregation_name" text NOT NULL,
	"earned" double precision NOT NULL,
	"possible" double precision NOT NULL,
	"percent" double precision NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "aggregates_course_key_learner_id_block_key_pk" PRIMARY KEY("course_key","learner_id","block_key")
);
--> statement-breakpoint
CREATE TABLE "completion"."block_completions" (
	"course_key" text NOT NULL,
	"learner_id" integer NOT NULL,
	"block_key" text NOT NULL,
	"completion" double precision NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "block_completions_course_key_learner_id_block_key_pk" PRIMARY KEY("course_key","learner_id","block_key"),
	CONSTRAINT "block_completions_completion_range" CHECK (completion >= 0 and completion <= 1)
);
--> statement-breakpoint
CREATE TABLE "completion"."blocks" (
	"course_key" text NOT NULL,
	"key" text NOT NULL,
	"type" text NOT NULL,
	"parent_key" text,
	"position" integer NOT NULL,
	"mode" text NOT NULL,
	"display_name" text,
	"start" timestamp with time zone,
	"visible_to_staff_only" boolean DEFAULT false NOT NULL,
	CONSTRAINT "blocks_course_key_key_pk" PRIMARY KEY("course_key","key")
);
--> statement-breakpoint
CREATE TABLE "completion"."cohort_memberships" (
	"cohort_id" integer NOT NULL,
	"learner_id" integer NOT NULL,
	CONSTRAINT "cohort_memberships_cohort_id_learner_id_pk" PRIMARY KEY("cohort_id","learner_id")
);
--> statement-breakpoint
CREATE TABLE "completion"."cohorts" (
	"id" integer PRIMARY KEY NOT NULL,
	"course_key" text NOT NULL,
	"name" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "completion"."course_roles" (
	"course_key" text NOT NULL,
	"learner_id" integer NOT NULL,
	"role" text NOT NULL,
	CONSTRAINT "course_roles_course_key_learner_id_role_pk" PRIMARY KEY("course_key","learner_id","role")
);
--> statement-breakpoint
CREATE TABLE "completion"."courses" (
	"key" text PRIMARY KEY NOT NULL,
	"mobile_available" boolean DEFAULT false NOT NULL,
	"structure_version" integer DEFAULT 0 NOT NULL,
	"structure_hash" text
);
--> statement-breakpoint
CREATE TABLE "completion"."enrollments" (
	"learner_id" integer NOT NULL,
	"course_key" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"mode" text DEFAULT 'audit' NOT NULL,
	CONSTRAINT "enrollments_course_key_learner_id_pk" PRIMARY KEY("course_key","learner_id")
);
--> statement-breakpoint
CREATE TABLE "completion"."learners" (
	"id" integer PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"email" text NOT NULL,
	"signon_uid" text,
	CONSTRAINT "learners_username_unique" UNIQUE("username"),
	CONSTRAINT "learners_signon_uid_unique" UNIQUE("signon_uid")
);
--> statement-breakpoint
CREATE TABLE "completion"."stale_completions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "completion"."stale_completions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"username" text NOT NULL,
	"course_key" text NOT NULL,
	"block_key" text,
	"force" boolean DEFAULT false NOT NULL,
	"resolved" boolean DEFAULT false NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "completion"."aggregates" ADD CONSTRAINT "aggregates_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."aggregates" ADD CONSTRAINT "aggregates_learner_id_learners_id_fk" FOREIGN KEY ("learner_id") REFERENCES "completion"."learners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."block_completions" ADD CONSTRAINT "block_completions_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."block_completions" ADD CONSTRAINT "block_completions_learner_id_learners_id_fk" FOREIGN KEY ("learner_id") REFERENCES "completion"."learners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."blocks" ADD CONSTRAINT "blocks_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."cohort_memberships" ADD CONSTRAINT "cohort_memberships_cohort_id_cohorts_id_fk" FOREIGN KEY ("cohort_id") REFERENCES "completion"."cohorts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."cohort_memberships" ADD CONSTRAINT "cohort_memberships_learner_id_learners_id_fk" FOREIGN KEY ("learner_id") REFERENCES "completion"."learners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."cohorts" ADD CONSTRAINT "cohorts_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."course_roles" ADD CONSTRAINT "course_roles_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."course_roles" ADD CONSTRAINT "course_roles_learner_id_learners_id_fk" FOREIGN KEY ("learner_id") REFERENCES "completion"."learners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD CONSTRAINT "enrollments_learner_id_learners_id_fk" FOREIGN KEY ("learner_id") REFERENCES "completion"."learners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD CONSTRAINT "enrollments_course_key_courses_key_fk" FOREIGN KEY ("course_key") REFERENCES "completion"."courses"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "aggregates_course_block_idx" ON "completion"."aggregates" USING btree ("course_key","block_key","learner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "cohorts_course_name_idx" ON "completion"."cohorts" USING btree ("course_key","name");--> statement-breakpoint
CREATE INDEX "enrollments_learner_idx" ON "completion"."enrollments" USING btree ("learner_id");--> statement-breakpoint
CREATE INDEX "learners_email_lower_idx" ON "completion"."learners" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "stale_completions_unresolved_idx" ON "completion"."stale_completions" USING btree ("username","course_key") WHERE "completion"."stale_completions"."resolved" = false;