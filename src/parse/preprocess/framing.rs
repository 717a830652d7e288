//! CI framing: the timestamps, job and step prefixes and group or section markers that CI
//! systems put around a tool's output, recognised from a log's first lines and stripped before
//! any parser sees a line. A parser written for the tool's own output then reads a CI log as
//! well as the tool's, whether `parse` reads a saved log or the gate runs a check.
//!
//! The shapes, each from real logs and from the code that writes them:
//! - GitHub Actions raw log: `2022-06-20T09:28:05.8714453Z ##[group]Operating System`, every line
//!   behind a timestamp with 7 decimals, groups between `##[group]` and `##[endgroup]` (raw logs
//!   quoted in pluhin/sa.it-academy.by `Andrei_Bakaushyn/04.GitOPS/README.md`); `##[error]`,
//!   `##[warning]`, `##[notice]`, `##[debug]`, `##[command]`, `##[section]` are the runner's
//!   other log markers.
//! - `gh run view --log` / `--log-failed`: each line behind `<job>\t<step>\t` (cli/cli
//!   `pkg/cmd/run/view/view.go`, `prefix := fmt.Sprintf("%s\t%s\t", job.Name, step.Name)`),
//!   then the GitHub timestamp: `build\tSet up job\t2024-09-09T17:05:20.0155475Z Current runner
//!   version: '2.319.1'`. Job and step names hold spaces and any character but a tab.
//! - GitLab job log (runner 17+ with `FF_TIMESTAMPS`, the default from runner 18.7):
//!   `2024-01-01T00:01:00.000000Z 00O section_start:1000:my_section[key1=value1]\r`, then
//!   `…Z 00O+header 1`: a timestamp, a stream number and `O`/`E` (stdout, stderr), and `+` when
//!   the line continues the one before (gitlabhq/gitlabhq
//!   `spec/frontend/ci/job_log_viewer/lib/scanner_spec.js`). Sections are
//!   `\e[0Ksection_start:UNIX_TIMESTAMP:SECTION_NAME[collapsed=true]\r\e[0KHEADER` and
//!   `\e[0Ksection_end:UNIX_TIMESTAMP:SECTION_NAME\r\e[0K` (docs.gitlab.com/ci/jobs/job_logs,
//!   "Custom collapsible sections"); without timestamps only the markers frame the log.
//! - Jenkins: the timestamper plugin's Pipeline decorator writes `[` +
//!   `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` + `] ` before each line (jenkinsci/timestamper-plugin
//!   `src/main/java/hudson/plugins/timestamper/pipeline/GlobalDecorator.java`), as in
//!   `[2022-01-12T19:00:14.975Z] [Pipeline] sh`; its plain-text view
//!   `/timestamps/?time=HH:mm:ss&appendLog` (or `?elapsed=HH:mm:ss.S&appendLog`) writes the time,
//!   a space and the line (`TimestampsActionOutput.java`; plugins.jenkins.io/timestamper shows
//!   `21:51:15  Started by user anonymous`). `[Pipeline] ` lines are Pipeline's own steps.
//!
//! `HH:mm:ss ` is ambiguous (a tool may print times), so it is stripped only from a log whose
//! first lines mostly carry it; the other shapes are specific enough that one line of them in
//! the look-ahead names the framing. Lines of a framed log without the prefix pass as they are.
//! Marker lines with no tool output (groups, sections, `[Pipeline]`, `##[debug]`, `##[command]`)
//! are dropped; `##[error]msg` (and warning, notice) keeps `msg`. An unframed line costs a check
//! of its first byte.

use super::clean_line_with;

mod shapes;

use shapes::{
    after_sections, gh_prefix, github_prefix, gitlab_prefix, jenkins_clock_prefix,
    jenkins_iso_prefix, without_bom,
};

/// How many non-empty lines the recogniser looks at before it decides.
const LOOKAHEAD_LINES: usize = 16;
/// How many bytes it holds while it looks (the memory bound of the look-ahead).
const LOOKAHEAD_BYTES: usize = 64 * 1024;

/// A CI system's way of framing the lines of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A GitHub Actions raw log: a timestamp before each line, `##[…]` markers.
    GitHubActions,
    /// `gh run view --log`: job and step names, then the GitHub Actions framing.
    GhRunView,
    /// A GitLab job log: `section_start`/`section_end` markers, timestamps and streams.
    GitLab,
    /// A Jenkins Pipeline log with the timestamper's `[…Z] ` prefix.
    JenkinsIso,
    /// The Jenkins timestamper's plain-text `HH:mm:ss ` (or elapsed `HH:mm:ss.S `) prefix.
    JenkinsClock,
}

impl Framing {
    /// In the order a line is tried: GitLab's stream tag first, as its timestamp alone could
    /// pass for GitHub's.
    const ALL: [Framing; 5] = [
        Framing::GitLab,
        Framing::GitHubActions,
        Framing::GhRunView,
        Framing::JenkinsIso,
        Framing::JenkinsClock,
    ];

    /// What `--explain` calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Framing::GitHubActions => "GitHub Actions (timestamps, ##[…] markers)",
            Framing::GhRunView => "gh run view --log (job, step, timestamp)",
            Framing::GitLab => "GitLab job log (timestamps, sections)",
            Framing::JenkinsIso => "Jenkins timestamper ([…Z] prefix)",
            Framing::JenkinsClock => "Jenkins timestamper (HH:mm:ss prefix)",
        }
    }

    /// The length of this framing's prefix at the start of `line`, and for GitLab whether the
    /// line continues the one before.
    fn prefix(self, line: &[u8]) -> Option<(usize, bool)> {
        match self {
            Framing::GitHubActions => github_prefix(line).map(|len| (len, false)),
            Framing::GhRunView => gh_prefix(line).map(|len| (len, false)),
            Framing::GitLab => gitlab_prefix(line),
            Framing::JenkinsIso => jenkins_iso_prefix(line).map(|len| (len, false)),
            Framing::JenkinsClock => jenkins_clock_prefix(line).map(|len| (len, false)),
        }
    }
}

/// What the framing stage did to a log, for `--explain` and the logs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FrameReport {
    /// The framing recognised from the first lines, if any.
    pub framing: Option<Framing>,
    /// Lines whose prefix (timestamp; job and step) was removed.
    pub prefixed: u64,
    /// Marker lines dropped: they carry no tool output.
    pub dropped: u64,
    /// Marker lines kept as their message (`##[error]msg` is `msg`).
    pub unwrapped: u64,
    /// GitLab continuation lines joined to the line before.
    pub joined: u64,
}

impl FrameReport {
    /// One line for `--explain`: which framing, and how many lines it touched.
    pub fn summary(&self) -> String {
        let name = self.framing.map_or("none recognised", Framing::describe);
        format!(
            "CI framing: {name}; prefix stripped from {} lines, {} marker lines dropped, {} kept \
             as their message, {} continuations joined",
            self.prefixed, self.dropped, self.unwrapped, self.joined
        )
    }

    /// Whether the stage changed anything.
    pub fn touched(&self) -> bool {
        self.prefixed + self.dropped + self.unwrapped + self.joined > 0
    }
}

/// Where the recogniser is.
#[derive(Debug)]
enum State {
    /// Still reading the first lines: each raw line and the bytes cut from it.
    Looking {
        lines: Vec<(Vec<u8>, u64)>,
        bytes: usize,
        non_empty: usize,
    },
    /// No framing: only stand-alone markers are handled.
    Plain,
    Framed(Framing),
}

/// Strips the CI framing of raw lines, then cleans them ([`clean_line`](super::clean_line)) for the parsers.
#[derive(Debug)]
pub struct Framer {
    state: State,
    report: FrameReport,
    /// GitLab: the raw line a `+` continuation may still extend, and the bytes cut from it.
    held: Option<(Vec<u8>, u64)>,
    max_line: usize,
    /// Where a line is written without its escapes, kept from line to line.
    scratch: Vec<u8>,
}

impl Framer {
    /// A framer for lines of at most `max_line` bytes (a joined GitLab line is cut there too).
    pub fn new(max_line: usize) -> Self {
        Self {
            state: State::Looking {
                lines: Vec::new(),
                bytes: 0,
                non_empty: 0,
            },
            report: FrameReport::default(),
            held: None,
            max_line,
            scratch: Vec::new(),
        }
    }

    /// What the stage did so far.
    pub fn report(&self) -> &FrameReport {
        &self.report
    }

    /// Takes one raw line (without its `\n`; `cut` bytes were left out of it) and passes the
    /// text the parsers should see to `on_line`, now or (while looking, or holding a GitLab
    /// line) later.
    #[inline]
    pub fn line(
        &mut self,
        raw: &[u8],
        text: Option<&str>,
        cut: u64,
        on_line: &mut dyn FnMut(&str),
    ) {
        match self.state {
            State::Plain => self.plain(raw, text, cut, on_line),
            State::Framed(framing) => self.framed(framing, raw, cut, on_line),
            State::Looking { .. } => self.look(raw, cut, on_line),
        }
    }

    /// Passes on what is still held: the look-ahead when the log was short, the last GitLab
    /// line.
    pub fn finish(&mut self, on_line: &mut dyn FnMut(&str)) {
        if matches!(self.state, State::Looking { .. }) {
            self.decide(on_line);
        }
        if let Some((held, cut)) = self.held.take() {
            self.gitlab_line(&held, cut, on_line);
        }
    }

    fn look(&mut self, raw: &[u8], cut: u64, on_line: &mut dyn FnMut(&str)) {
        let State::Looking {
            lines,
            bytes,
            non_empty,
        } = &mut self.state
        else {
            return;
        };
        lines.push((raw.to_vec(), cut));
        *bytes += raw.len();
        *non_empty += usize::from(!raw.is_empty());
        if *non_empty >= LOOKAHEAD_LINES || *bytes >= LOOKAHEAD_BYTES {
            self.decide(on_line);
        }
    }

    /// Names the framing of the lines looked at, then passes them on.
    fn decide(&mut self, on_line: &mut dyn FnMut(&str)) {
        let looked = std::mem::replace(&mut self.state, State::Plain);
        let State::Looking { lines, .. } = looked else {
            return;
        };
        let framing = recognise(lines.iter().map(|(raw, _)| raw.as_slice()));
        self.report.framing = framing;
        self.state = framing.map_or(State::Plain, State::Framed);
        for (raw, cut) in &lines {
            self.line(raw, None, *cut, on_line);
        }
    }

    fn framed(&mut self, framing: Framing, raw: &[u8], cut: u64, on_line: &mut dyn FnMut(&str)) {
        let body = without_bom(raw);
        let prefix = framing.prefix(body);
        if prefix.is_some() {
            self.report.prefixed += 1;
        }
        if framing == Framing::GitLab {
            return self.gitlab(body, prefix, cut, on_line);
        }
        match prefix {
            Some((len, _)) => self.plain(&body[len..], None, cut, on_line),
            None => self.plain(raw, None, cut, on_line),
        }
    }

    /// A GitLab line: held until the next one shows whether it continues (`00O+`).
    fn gitlab(
        &mut self,
        body: &[u8],
        prefix: Option<(usize, bool)>,
        cut: u64,
        on_line: &mut dyn FnMut(&str),
    ) {
        let (content, continues) = prefix.map_or((body, false), |(len, plus)| (&body[len..], plus));
        if continues && let Some((held, held_cut)) = &mut self.held {
            let room = self.max_line.saturating_sub(held.len());
            let taken = content.len().min(room);
            held.extend_from_slice(&content[..taken]);
            *held_cut += (content.len() - taken) as u64 + cut;
            self.report.joined += 1;
            return;
        }
        if let Some((held, held_cut)) = self.held.take() {
            self.gitlab_line(&held, held_cut, on_line);
        }
        self.held = Some((content.to_vec(), cut));
    }

    /// A whole GitLab line: a section marker (and the header after it) is dropped.
    fn gitlab_line(&mut self, content: &[u8], cut: u64, on_line: &mut dyn FnMut(&str)) {
        if after_sections(content).is_some() {
            self.report.dropped += 1;
            return;
        }
        self.plain(content, None, cut, on_line);
    }

    /// The hot path of an unframed line: clean it, then a first-byte check for a marker.
    #[inline]
    fn plain(&mut self, raw: &[u8], text: Option<&str>, cut: u64, on_line: &mut dyn FnMut(&str)) {
        let mut scratch = std::mem::take(&mut self.scratch);
        let cleaned = clean_line_with(raw, text, &mut scratch);
        let text = cleaned.as_str();
        let kept = match text.as_bytes().first() {
            Some(b'#' | b'[') => self.marker(text),
            _ => Some(text),
        };
        if let Some(kept) = kept {
            emit(kept, cut, on_line);
        }
        drop(cleaned);
        self.scratch = scratch;
    }

    /// `text` without its marker: `None` to drop the line.
    fn marker<'t>(&mut self, text: &'t str) -> Option<&'t str> {
        if text.starts_with("[Pipeline] ") || text == "[Pipeline]" {
            self.report.dropped += 1;
            return None;
        }
        let Some(rest) = text.strip_prefix("##[") else {
            return Some(text);
        };
        let Some((name, message)) = rest.split_once(']') else {
            return Some(text);
        };
        match name {
            "group" | "endgroup" | "debug" | "command" | "section" => {
                self.report.dropped += 1;
                None
            }
            "error" | "warning" | "notice" => {
                self.report.unwrapped += 1;
                Some(message)
            }
            _ => Some(text),
        }
    }
}

/// Passes `text` on, with the cut marker when bytes were left out of it.
fn emit(text: &str, cut: u64, on_line: &mut dyn FnMut(&str)) {
    if cut == 0 {
        on_line(text);
    } else {
        on_line(&format!(
            "{text} [refine-loop: line cut, {cut} more bytes left out]"
        ));
    }
}

/// The framing most of `lines` carry, if they carry one clearly enough.
pub fn recognise<'l>(lines: impl Iterator<Item = &'l [u8]>) -> Option<Framing> {
    let mut votes = [0usize; 5];
    let mut non_empty = 0;
    for line in lines {
        if line.is_empty() {
            continue;
        }
        non_empty += 1;
        if let Some(framing) = classify(line) {
            votes[Framing::ALL.iter().position(|f| *f == framing).unwrap_or(0)] += 1;
        }
    }
    let (index, &count) = votes
        .iter()
        .enumerate()
        .max_by_key(|(index, count)| (**count, std::cmp::Reverse(*index)))?;
    let framing = Framing::ALL[index];
    let clear = match framing {
        // A tool may print times of day: most of the first lines must carry them.
        Framing::JenkinsClock => count >= 2 && count * 2 >= non_empty,
        _ => count >= 1,
    };
    clear.then_some(framing)
}

/// The framing one raw line shows, if any.
pub fn classify(raw: &[u8]) -> Option<Framing> {
    let line = without_bom(raw);
    Framing::ALL
        .into_iter()
        .find(|framing| framing.prefix(line).is_some())
        .or_else(|| after_sections(line).map(|_| Framing::GitLab))
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
