/**
 * The attachments worker: `{}` with an attachment `image` (a PGM picture) → the picture's edges,
 * attached to the result as `edges`; the job's output says what it found.
 *   node dist/cli/main.js worker examples/attachments/worker.js --queue edges
 */
import { NonRetryableError } from "@sluice/client";
import { edgeCount, parsePgm, sobel, writePgm } from "./edges.js";

export default async function edges(job, ctx) {
  const image = ctx.attachments.image;
  if (!image) throw new NonRetryableError("attach the picture as `image`");
  const result = sobel(parsePgm(await image.bytes()));
  await ctx.attach("edges", writePgm(result), { contentType: "image/x-portable-graymap" });
  return { width: result.width, height: result.height, edgePixels: edgeCount(result) };
}
