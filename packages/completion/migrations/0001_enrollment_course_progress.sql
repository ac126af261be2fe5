ALTER TABLE "completion"."enrollments" ADD COLUMN "course_earned" double precision;--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD COLUMN "course_possible" double precision;--> statement-breakpoint
ALTER TABLE "completion"."enrollments" ADD COLUMN "course_percent" double precision;