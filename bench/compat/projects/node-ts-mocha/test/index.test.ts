import { strict as assert } from "node:assert";
import { slugify } from "../src/index";

describe("slugify", () => {
  it("joins words", () => assert.equal(slugify("Hello, World"), "hello-world"));
});
