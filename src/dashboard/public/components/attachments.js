// @ts-check
/** A job's attachments (input or output files): name, size, content type and a download link. */
import { html } from "htm/preact";
import { api, q } from "../lib/api.js";
import { bytes } from "../lib/format.js";

/** @param {{ attachments: Record<string, any> | null | undefined, label: string }} props */
export function AttachmentsTable({ attachments, label }) {
  const entries = Object.entries(attachments ?? {});
  if (entries.length === 0) return null;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${label}>
    <table>
      <thead><tr><th scope="col">Name</th><th scope="col" class="num">Size</th><th scope="col">Content type</th><th scope="col">SHA-256</th><th scope="col">File</th></tr></thead>
      <tbody>
        ${entries.map(
          ([name, a]) => html`<tr key=${name}>
            <th scope="row">${name}</th>
            <td class="num" title=${`${a.size} bytes`}>${bytes(a.size)}</td>
            <td><code>${a.contentType}</code></td>
            <td><code title=${a.sha256}>${String(a.sha256 ?? "").slice(0, 12)}…</code></td>
            <td><a href=${a.downloadUrl ?? `#blob-${a.blobId}`} download=${name} aria-label=${`Download ${name}`} onClick=${(/** @type {MouseEvent} */ e) => (a.downloadUrl ? undefined : download(e, name, a.blobId))}>Download</a></td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/**
 * An attachment shown without a download URL (a job's inputs: only leases and finished outputs
 * carry one): ask the blob for a fresh, presigned one, then download that as the link would.
 * @param {MouseEvent} e @param {string} name @param {string} blobId
 */
async function download(e, name, blobId) {
  e.preventDefault();
  const blob = await api("GET", `/v1/blobs/${q(blobId)}`);
  const link = document.createElement("a");
  link.href = blob.downloadUrl;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
}
