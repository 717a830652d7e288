//! The composite action's steps replayed in order, as read from action.yml: each `if:` and each
//! value with the contexts substituted, the `run:` steps run by bash with their `env:` and a
//! fresh `$GITHUB_OUTPUT`, the cache steps carried out by a local stand-in for the Actions cache.
//! The install step is left out (the tests' binary is the refine-loop run); `install.sh resolve`
//! runs, against the release host the test names (`release_base`; none answers by default). The
//! upload is carried out by a stand-in for a workflow run's artifacts that behaves as the pinned
//! actions do: upload-artifact (v6) refuses a name the run already has (409 Conflict) and makes no
//! artifact when it finds no file, and download-artifact (v7) extracts a single artifact straight
//! into its `path` and several each into `path/<name>/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::expression::Contexts;
use crate::support::binary;

/// A local stand-in for the Actions cache: a folder of entries, each a key, the `path` it was
/// saved from (the real cache's version is a hash of it: another path does not match) and a
/// copy of that folder. Entries are numbered in the order they were saved; none is overwritten.
pub struct CacheStandIn {
    dir: PathBuf,
}

/// One entry of the stand-in.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    pub key: String,
    path: String,
    content: PathBuf,
}

impl CacheEntry {
    /// The paths it holds (files and folders), relative to the workspace, sorted.
    pub fn paths(&self) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                out.push(path.strip_prefix(root).unwrap().display().to_string());
                if path.is_dir() {
                    walk(&path, root, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.content, &self.content, &mut out);
        out.sort();
        out
    }
}

impl CacheStandIn {
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Vec<CacheEntry> {
        let mut numbered: Vec<(u64, PathBuf)> = std::fs::read_dir(&self.dir)
            .map(|dir| dir.flatten().map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| Some((p.file_name()?.to_str()?.parse().ok()?, p)))
            .collect();
        numbered.sort();
        numbered
            .into_iter()
            .map(|(_, entry)| CacheEntry {
                key: std::fs::read_to_string(entry.join("key")).unwrap(),
                path: std::fs::read_to_string(entry.join("path")).unwrap(),
                content: entry.join("content"),
            })
            .collect()
    }

    /// actions/cache/restore: the entry saved under `key` from `path`, else for each restore key
    /// in order the newest entry whose key starts with it, its paths copied back into
    /// `workspace`.
    /// Returns the key restored and whether it was an exact hit.
    pub fn restore(
        &self,
        workspace: &Path,
        path: &str,
        key: &str,
        restore_keys: &[&str],
    ) -> Option<(String, bool)> {
        let entries: Vec<CacheEntry> = self
            .entries()
            .into_iter()
            .filter(|e| e.path == path)
            .collect();
        let exact = entries.iter().find(|e| e.key == key);
        let found = exact.map(|e| (e, true)).or_else(|| {
            restore_keys
                .iter()
                .find_map(|prefix| entries.iter().rev().find(|e| e.key.starts_with(prefix)))
                .map(|e| (e, false))
        })?;
        copy_tree(&found.0.content, workspace);
        Some((found.0.key.clone(), found.1))
    }

    /// actions/cache/save: a copy of the paths in `path` (one a line, relative to `workspace`)
    /// under `key`; nothing when the key is taken (entries are immutable) or no path exists
    /// (the real one warns).
    pub fn save(&self, workspace: &Path, path: &str, key: &str) -> bool {
        let entries = self.entries();
        // One path a line; those that do not exist are left out (none: nothing is saved).
        let sources: Vec<&str> = path
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && workspace.join(line).exists())
            .collect();
        if entries.iter().any(|e| e.key == key) || sources.is_empty() {
            return false;
        }
        let entry = self.dir.join(entries.len().to_string());
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join("key"), key).unwrap();
        std::fs::write(entry.join("path"), path).unwrap();
        for source in sources {
            let (from, to) = (workspace.join(source), entry.join("content").join(source));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            if from.is_dir() {
                copy_tree(&from, &to);
            } else {
                std::fs::copy(&from, &to).unwrap();
            }
        }
        true
    }
}

/// Copies the folder `from` to `to` (created), files and folders, keeping file modes.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A stand-in for one workflow run's artifacts: numbered folders, each the artifact's name and
/// a copy of its files. Ids are given in upload order, from 1.
pub struct ArtifactStore {
    dir: PathBuf,
}

/// What download-artifact is asked for.
pub enum Download<'a> {
    /// `artifact-ids:` (comma-separated).
    Ids(&'a str),
    /// `name:`.
    Name(&'a str),
    /// `pattern:` (a glob: `*` only).
    Pattern(&'a str),
}

impl ArtifactStore {
    pub fn new(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// Every artifact: (id, name), oldest first.
    pub fn artifacts(&self) -> Vec<(u64, String)> {
        let mut all: Vec<(u64, String)> = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let id = e.file_name().to_str()?.parse().ok()?;
                Some((id, std::fs::read_to_string(e.path().join("name")).ok()?))
            })
            .collect();
        all.sort();
        all
    }

    /// upload-artifact with `include-hidden-files: true` and `if-no-files-found: warn`: the
    /// files under `path` as the artifact `name`, and its id; None (a warning) when there is no
    /// file; an error, as the real one's, when the run already has an artifact of that name.
    pub fn upload(&self, name: &str, path: &Path) -> Result<Option<u64>, String> {
        let artifacts = self.artifacts();
        let has_files = path.is_dir()
            && std::fs::read_dir(path)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false);
        if !has_files && !path.is_file() {
            return Ok(None);
        }
        if artifacts.iter().any(|(_, taken)| taken == name) {
            return Err(format!(
                "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) \
                 Conflict: an artifact with this name already exists on the workflow run ({name})"
            ));
        }
        let id = artifacts.last().map_or(1, |(id, _)| id + 1);
        let entry = self.dir.join(id.to_string());
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join("name"), name).unwrap();
        copy_tree(path, &entry.join("content"));
        Ok(Some(id))
    }

    /// download-artifact v7 (merge-multiple false): the artifacts chosen, a single one
    /// extracted straight into `path`, several each into `path/<name>/`; an error when an id or
    /// a name is not found (a pattern that matches nothing downloads nothing).
    pub fn download(&self, what: Download<'_>, path: &Path) -> Result<usize, String> {
        let artifacts = self.artifacts();
        let chosen: Vec<&(u64, String)> = match what {
            Download::Ids(ids) => {
                let wanted: Vec<&str> = ids.split(',').map(str::trim).collect();
                let chosen: Vec<&(u64, String)> = artifacts
                    .iter()
                    .filter(|(id, _)| wanted.contains(&id.to_string().as_str()))
                    .collect();
                if chosen.is_empty() {
                    return Err("None of the provided artifact IDs were found".to_string());
                }
                chosen
            }
            Download::Name(name) => vec![
                artifacts
                    .iter()
                    .find(|(_, known)| known == name)
                    .ok_or(format!("Artifact '{name}' not found"))?,
            ],
            Download::Pattern(pattern) => artifacts
                .iter()
                .filter(|(_, name)| glob_matches(pattern, name))
                .collect(),
        };
        for (id, name) in &chosen {
            let content = self.dir.join(id.to_string()).join("content");
            let target = if chosen.len() == 1 {
                path.to_path_buf()
            } else {
                path.join(name)
            };
            copy_tree(&content, &target);
        }
        Ok(chosen.len())
    }
}

/// A glob of literal characters and `*` (any run of characters), as artifact patterns are used.
fn glob_matches(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.starts_with(head)
                && (0..=text.len() - head.len()).any(|skip| {
                    text.is_char_boundary(head.len() + skip)
                        && glob_matches(tail, &text[head.len() + skip..])
                })
        }
    }
}

/// What one replay of the action did.
#[derive(Debug)]
pub struct Replay {
    /// The steps that ran, by name, in order.
    pub ran: Vec<String>,
    /// The run step's process, when it ran.
    pub run: Option<Output>,
    /// The key each restore step restored (None: a miss), and whether it was an exact hit.
    pub restored: Vec<Option<(String, bool)>>,
    /// The key each save step saved under, and whether it saved.
    pub saved: Vec<(String, bool)>,
    /// The upload step's result, when it ran: the artifact's id (None: no file, a warning), or
    /// the error that failed the step.
    pub upload: Option<Result<Option<u64>, String>>,
    pub contexts: Contexts,
}

/// Replays action.yml's steps in `workspace` with `inputs` (over the inputs' defaults) and the
/// `github` context, against `cache`; `runner` is the job's own folder ($GITHUB_STEP_SUMMARY,
/// each step's $GITHUB_OUTPUT, $RUNNER_TEMP). Two entries of `github` are the test's, not
/// GitHub's: `release_base` (where releases are looked for) and `refine_loop_bin` (a wrapper the
/// run step starts in place of the binary).
pub fn replay(
    workspace: &Path,
    runner: &Path,
    inputs: &[(&str, &str)],
    github: &[(&str, &str)],
    cache: &CacheStandIn,
) -> Replay {
    let artifacts = ArtifactStore::new(&runner.join("artifacts"));
    replay_with(workspace, runner, inputs, github, cache, &artifacts)
}

/// [`replay`], uploading into `artifacts` (one workflow run's, shared by its replays).
pub fn replay_with(
    workspace: &Path,
    runner: &Path,
    inputs: &[(&str, &str)],
    github: &[(&str, &str)],
    cache: &CacheStandIn,
    artifacts: &ArtifactStore,
) -> Replay {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let action = crate::ci_files::read_yaml("action.yml");
    let mut contexts = Contexts::default();
    for (name, input) in action["inputs"].as_object().unwrap() {
        let default = input["default"].as_str().unwrap_or_default();
        contexts.inputs.insert(name.clone(), default.to_string());
    }
    for (name, value) in inputs {
        assert!(contexts.inputs.contains_key(*name), "no input {name}");
        contexts
            .inputs
            .insert((*name).to_string(), (*value).to_string());
    }
    contexts.github = github
        .iter()
        .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
        .collect();
    let action_path = root.display().to_string();
    contexts.github.insert("action_path".into(), action_path);

    let mut replay = Replay {
        ran: Vec::new(),
        run: None,
        restored: Vec::new(),
        saved: Vec::new(),
        upload: None,
        contexts: Contexts::default(),
    };
    let mut failed = false;
    for (index, step) in action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let name = step["name"].as_str().unwrap().to_string();
        if !contexts.runs(step["if"].as_str(), failed) {
            continue;
        }
        let with = |field: &str| contexts.substitute(step["with"][field].as_str().unwrap_or(""));
        let uses = step["uses"].as_str().unwrap_or("");
        let mut outputs = BTreeMap::new();
        if uses.starts_with("actions/cache/restore@") {
            let (path, key, restore_keys) = (with("path"), with("key"), with("restore-keys"));
            let restore_keys: Vec<&str> = restore_keys.lines().filter(|l| !l.is_empty()).collect();
            let restored = cache.restore(workspace, &path, &key, &restore_keys);
            let hit = restored.as_ref().is_some_and(|(_, exact)| *exact);
            outputs.insert("cache-hit".to_string(), hit.to_string());
            replay.restored.push(restored);
        } else if uses.starts_with("actions/cache/save@") {
            let key = with("key");
            let saved = cache.save(workspace, &with("path"), &key);
            replay.saved.push((key, saved));
        } else if uses.starts_with("actions/cache@") {
            // The source build's cache: restored here (saved at the job's end, not replayed).
            let (path, key) = (with("path"), with("key"));
            let restored = cache.restore(workspace, &path, &key, &[]);
            replay.restored.push(restored);
        } else if uses.starts_with("actions/upload-artifact@") {
            assert_eq!(step["with"]["include-hidden-files"], true, "hidden files");
            let path = workspace.join(with("path"));
            let uploaded = artifacts.upload(&with("name"), &path);
            if let Ok(Some(id)) = &uploaded {
                outputs.insert("artifact-id".to_string(), id.to_string());
            }
            failed |= uploaded.is_err();
            replay.upload = Some(uploaded);
        } else if name == "Install refine-loop" {
            // Left out: see the module's comment.
        } else if let Some(script) = step["run"].as_str() {
            let output_file = runner.join(format!("output-{index}"));
            std::fs::write(&output_file, "").unwrap();
            let mut command = run_step(workspace, runner, &output_file, &contexts, script);
            for (variable, value) in step["env"].as_object().into_iter().flatten() {
                command.env(variable, contexts.substitute(value.as_str().unwrap()));
            }
            let output = command.output().unwrap();
            failed |= !output.status.success();
            outputs = read_outputs(&std::fs::read_to_string(&output_file).unwrap());
            if step["id"] == "run" {
                replay.run = Some(output);
            } else {
                assert!(output.status.success(), "{name}: {output:?}");
            }
        } else {
            panic!("the replay does not know the step {name} ({uses})");
        }
        if let Some(id) = step["id"].as_str() {
            contexts.steps.insert(id.to_string(), outputs);
        }
        replay.ran.push(name);
    }
    replay.contexts = contexts;
    replay
}

/// A `run:` step as the runner starts it: bash in the workspace, with the runner's variables.
fn run_step(
    workspace: &Path,
    runner: &Path,
    output_file: &Path,
    contexts: &Contexts,
    script: &str,
) -> Command {
    let mut command = Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(workspace);
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("REFINE_LOOP_") || key_text.starts_with("GITHUB_") {
            command.env_remove(&key);
        }
    }
    let github = |name: &str| contexts.github.get(name).cloned().unwrap_or_default();
    // The refine-loop the step runs: the test's own wrapper of it, when it names one.
    let bin = Some(github("refine_loop_bin"))
        .filter(|bin| !bin.is_empty())
        .unwrap_or_else(|| binary().to_string());
    command
        .env("REFINE_LOOP_BIN", bin)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", workspace)
        .env("GITHUB_OUTPUT", output_file)
        .env("GITHUB_STEP_SUMMARY", runner.join("summary"))
        .env("GITHUB_REPOSITORY", github("repository"))
        .env("GITHUB_REF_NAME", github("ref_name"))
        .env("GITHUB_EVENT_NAME", github("event_name"))
        // Set on a pull request's events only (empty on any other), as the runner does.
        .env("GITHUB_BASE_REF", github("base_ref"))
        .env("GITHUB_HEAD_REF", github("head_ref"))
        .env("GITHUB_RUN_ID", github("run_id"))
        .env("GITHUB_RUN_ATTEMPT", github("run_attempt"))
        .env("RUNNER_TEMP", runner)
        // Where releases are looked for: the test's server, else nowhere that answers.
        .env(
            "REFINE_LOOP_RELEASE_BASE",
            Some(github("release_base"))
                .filter(|base| !base.is_empty())
                .unwrap_or_else(|| "file:///nonexistent/refine-loop-release".to_string()),
        )
        .env_remove("GITLAB_CI")
        .env_remove("CI_PROJECT_DIR")
        .env_remove("JENKINS_URL");
    command
}

/// The `name=value` lines of a `$GITHUB_OUTPUT` file, and its `name<<DELIMITER` blocks.
fn read_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let heredoc = line
            .split_once("<<")
            .filter(|(name, _)| !name.contains('='));
        if let Some((name, delimiter)) = heredoc {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            outputs.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            outputs.insert(name.to_string(), value.to_string());
        }
    }
    outputs
}
