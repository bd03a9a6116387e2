// The TypeScript worker's handler for bench/sdk-workers: does nothing, so the SDK is what is measured.
export default function noop() {
  return null;
}
