/**
 * Job ids and queue names as URL path segments. encodeURIComponent leaves `.` alone, and a
 * segment that is `.` or `..` is a dot segment: the URL parser (WHATWG's, which fetch uses) drops
 * it or climbs a level — percent-encoded as %2E too, which that parser reads the same — so
 * `jobs.get("..")` went to `/v1/` and `queue(".").list()` to another route. Such a segment is
 * percent-encoded twice (`%252E%252E`): it reaches the server as `%2E%2E`, which the jobs API
 * reads back as `..` (src/protocols/jobs/dot-segments.ts) and answers as it would any id or name.
 */
export function pathSegment(value: string): string {
  if (value === "." || value === "..") return "%252E".repeat(value.length);
  return encodeURIComponent(value);
}

export function jobPath(id: string): string {
  return `/v1/jobs/${pathSegment(id)}`;
}

export function queuePath(queue: string): string {
  return `/v1/queues/${pathSegment(queue)}`;
}
