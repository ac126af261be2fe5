// The bare SQL behind a single-user detail read, shared by the benchmark and by the floor route of its server.
import type pg from "pg";

/**
 * What the read needs: the learner, whether actively enrolled, whether stale, the stored structure digest, and (the
 * requested types being every stored type) all the learner's aggregates in the course. Prepared, as the service
 * prepares its own.
 */
export async function bareDetail(pool: pg.Pool, course: string, username: string): Promise<void> {
  await pool.query({
    name: "bench_detail",
    text: `with l as materialized (
             select x.id, x.username,
               exists (select 1 from completion.enrollments e where e.course_key = $1 and e.learner_id = x.id and e.is_active) as enrolled,
               exists (select 1 from completion.stale_completions s where s.username = x.username and s.course_key = $1 and not s.resolved) as stale,
               (select c.structure_hash from completion.courses c where c.key = $1) as course_hash
             from completion.learners x where x.username = $2)
           select l.id, l.username, l.enrolled, l.stale, l.course_hash, a.block_key, a.earned, a.possible
           from l left join completion.aggregates a on a.course_key = $1 and a.learner_id = l.id`,
    values: [course, username],
  });
}
