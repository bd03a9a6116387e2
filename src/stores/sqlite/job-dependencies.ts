/**
 * Job dependencies in SQLite: who waits for whom (job_dependencies), read inside the writes that
 * submit a child or finish a parent. The decisions are core's (dependencies.ts).
 */
import type Database from "better-sqlite3";

export class SqliteJobDependencies {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      add: db.prepare<[string, string]>("INSERT INTO job_dependencies (parent_id, child_id) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      children: db.prepare<[string], string>("SELECT child_id FROM job_dependencies WHERE parent_id = ?").pluck(),
    };
  }

  /** Inside a write: `childId` waits for each of `parentIds`. */
  add(childId: string, parentIds: readonly string[]): void {
    for (const parentId of parentIds) this.sql.add.run(parentId, childId);
  }

  /** Inside a write: the jobs that named `parentId` in dependsOn (one index seek; none for most jobs). */
  childrenOf(parentId: string): string[] {
    return this.sql.children.all(parentId);
  }
}
