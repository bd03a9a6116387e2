/** TagQueue, UntagQueue, ListQueueTags. */
import { fail } from "../../../core/index.js";
import { defineAction, queueForUrl } from "../action.js";
import { requiredString, requiredStringList, requiredStringMap } from "../wire-input.js";
import { xmlStringMap } from "../xml.js";

/** Control characters, lone surrogates and the noncharacters U+FFFE/U+FFFF: never in a tag. */
const forbiddenTagCharacter = /[\u0000-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function checkTagText(what: "key" | "value", text: string): void {
  if (forbiddenTagCharacter.test(text)) {
    fail("InvalidParameterValue", `Tag ${what} ${JSON.stringify(text.slice(0, 128))} is invalid. Reason: it contains a control character (U+0000–U+001F), a lone surrogate, U+FFFE or U+FFFF.`);
  }
}

export const tagQueue = defineAction({
  decode: (input) => {
    const tags = requiredStringMap(input, "Tags");
    for (const key in tags) {
      checkTagText("key", key);
      checkTagText("value", tags[key]!);
    }
    return { queueUrl: requiredString(input, "QueueUrl"), tags };
  },
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await ctx.queues.tagQueue(queue.name, req.tags);
  },
});

export const untagQueue = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), keys: requiredStringList(input, "TagKeys") }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await ctx.queues.untagQueue(queue.name, req.keys);
  },
});

interface ListQueueTagsResult {
  Tags?: Record<string, string>;
}

export const listQueueTags = defineAction({
  decode: (input) => requiredString(input, "QueueUrl"),
  async run(url, ctx): Promise<ListQueueTagsResult> {
    const queue = await queueForUrl(ctx, url);
    return Object.keys(queue.tags).length > 0 ? { Tags: queue.tags } : {};
  },
  toXml: (res) => xmlStringMap("Tag", "Key", "Value", res.Tags),
});
