// Lists the files the action's upload step would put in the artifact, the way
// actions/upload-artifact v4 and later (v6 is pinned; its search is v4's) finds them: its
// `with:` read from action.yml (`path`, with the run step's state-dir output put in, and
// `include-hidden-files`), searched with @actions/glob
// and upload-artifact's own options (symbolic links followed, a folder meaning everything under
// it, hidden files excluded unless `include-hidden-files` is true). Installed by scripts/test.
// Usage: node ci/artifact-files.mjs STATE_DIR [--without-hidden-files]; prints the files,
// relative to STATE_DIR, one a line (after @actions/core's `::debug::` lines). The flag searches
// as v4.4+ does without `include-hidden-files`, to show what that setting changes.
import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join, relative } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, ".tools", "node", "package.json"));
const glob = require("@actions/glob");
const YAML = require("yaml");

const stateDir = process.argv[2];
const action = YAML.parse(await readFile(join(root, "action.yml"), "utf8"));
const upload = action.runs.steps.find((step) => (step.uses ?? "").startsWith("actions/upload-artifact@"));
if (!upload) {
  console.error("action.yml has no actions/upload-artifact step");
  process.exit(2);
}
const searchPath = String(upload.with.path).replace("${{ steps.run.outputs.state-dir }}", stateDir);
const includeHidden =
  process.argv[3] !== "--without-hidden-files" && String(upload.with["include-hidden-files"] ?? "false") === "true";
const globber = await glob.create(searchPath, {
  followSymbolicLinks: true,
  implicitDescendants: true,
  omitBrokenSymbolicLinks: true,
  excludeHiddenFiles: !includeHidden,
});
const files = [];
for (const found of await globber.glob()) {
  if (!(await stat(found)).isDirectory()) {
    files.push(relative(stateDir, found));
  }
}
files.sort();
console.log(files.join("\n"));
