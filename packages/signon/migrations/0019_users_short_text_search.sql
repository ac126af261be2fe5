-- The users list searches fragments of names and e-mail addresses (`ilike '%…%'`). The trigram indexes narrow a
-- text of three characters or more; one of one or two characters has no trigram, so the list read every person to
-- find that nobody holds `qz`. This index holds every character and every pair of adjacent characters of each
-- person's lower-cased name and e-mail address: a short text that few people hold is found through it. The index is
-- built by 0022, CONCURRENTLY, so that writes to users go on meanwhile; this migration defines what it holds.
CREATE FUNCTION signon.short_grams(name text, email text) RETURNS text[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN array(
    SELECT DISTINCT substr(part, position, width)
      FROM unnest(array[lower(name), lower(email)]) AS part,
           generate_series(1, 2) AS width,
           generate_series(1, length(part) - width + 1) AS position
  );

