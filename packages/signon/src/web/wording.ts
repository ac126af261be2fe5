/** A count with its noun: "1 person", "3 people", "0 API tokens". */
export function countOf(count: number, singular: string, plural: string): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
