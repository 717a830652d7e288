//! Regions of one log that different tools printed (a gate script running ruff, then pytest):
//! while `auto` ranks the parsers, each one's score is kept per block of lines; afterwards a
//! Viterbi pass finds the parser per block that explains the most, paying a toll for every
//! switch. The split is taken only when each region's parser explains its region far better than
//! the best single parser does there.

/// Blocks a tally keeps; a longer log gets longer blocks (pairs of blocks are merged).
const MAX_BLOCKS: usize = 4096;
/// Lines per block while the log is short.
const FIRST_BLOCK_LINES: u64 = 8;
/// More regions than this is noise, not tools taking turns.
const MAX_REGIONS: usize = 4;
/// The toll for switching parsers, in score (an explained line scores 2, a skipped one 1).
const SWITCH_TOLL: u64 = 8;
/// A region's parser must score at least this in it (three lines explained)...
const MIN_REGION_SCORE: u64 = 6;
/// ...and this many times what the best single parser scores there.
const FAR_BETTER: u64 = 3;

/// One parser's score, per block of lines.
#[derive(Debug, Clone)]
pub struct Tally {
    scores: Vec<u32>,
    block_lines: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Self {
            scores: Vec::new(),
            block_lines: FIRST_BLOCK_LINES,
        }
    }
}

impl Tally {
    /// Adds `score` for the line at 0-based `index`.
    pub fn add(&mut self, index: u64, score: u32) {
        while index / self.block_lines >= MAX_BLOCKS as u64 {
            self.halve();
        }
        let block = (index / self.block_lines) as usize;
        if self.scores.len() <= block {
            self.scores.resize(block + 1, 0);
        }
        self.scores[block] = self.scores[block].saturating_add(score);
    }

    /// Brings the tally to the blocks of a log of `lines` lines, as every tally of one ranking
    /// must be: the same block length, one score per block.
    pub fn settle(&mut self, lines: u64) {
        while lines.div_ceil(self.block_lines) > MAX_BLOCKS as u64 {
            self.halve();
        }
        self.scores
            .resize(lines.div_ceil(self.block_lines) as usize, 0);
    }

    /// Lines per block.
    pub fn block_lines(&self) -> u64 {
        self.block_lines
    }

    fn halve(&mut self) {
        self.scores = self
            .scores
            .chunks(2)
            .map(|pair| pair.iter().fold(0u32, |a, b| a.saturating_add(*b)))
            .collect();
        self.block_lines *= 2;
    }

    fn score(&self, blocks: std::ops::Range<usize>) -> u64 {
        self.scores[blocks].iter().map(|&s| u64::from(s)).sum()
    }
}

/// A stretch of the log (1-based lines, inclusive) and the parser (an index into the tallies)
/// that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub parser: usize,
    pub first_line: u64,
    pub last_line: u64,
    /// The region's parser's score in it, and the best single parser's.
    pub score: u64,
    pub single_score: u64,
}

/// The regions of a log of `lines` lines when different parsers explain different stretches of
/// it far better than `tallies[single]`, the best single parser, explains the whole; `None` when
/// one parser is the better reading. Every tally must be [settled](Tally::settle) to `lines`.
pub fn attribute(tallies: &[&Tally], single: usize, lines: u64) -> Option<Vec<Region>> {
    let blocks = tallies.get(single)?.scores.len();
    if blocks < 2 || tallies.iter().any(|t| t.scores.len() != blocks) {
        return None;
    }
    let owners = best_path(tallies, blocks);
    let mut regions = Vec::new();
    let mut start = 0;
    for block in 1..=blocks {
        if block == blocks || owners[block] != owners[start] {
            regions.push(region(tallies, single, owners[start], start..block, lines));
            start = block;
        }
    }
    if regions.len() < 2 || regions.len() > MAX_REGIONS {
        return None;
    }
    let far_better = regions.iter().all(|r| {
        r.score >= MIN_REGION_SCORE
            && (r.parser == single || r.score >= FAR_BETTER * r.single_score)
    });
    let total: u64 = regions.iter().map(|r| r.score).sum();
    let gain = total.saturating_sub(tallies[single].score(0..blocks));
    (far_better && gain >= MIN_REGION_SCORE).then_some(regions)
}

fn region(
    tallies: &[&Tally],
    single: usize,
    parser: usize,
    blocks: std::ops::Range<usize>,
    lines: u64,
) -> Region {
    let block_lines = tallies[parser].block_lines;
    Region {
        parser,
        first_line: blocks.start as u64 * block_lines + 1,
        last_line: (blocks.end as u64 * block_lines).min(lines),
        score: tallies[parser].score(blocks.clone()),
        single_score: tallies[single].score(blocks),
    }
}

/// The parser per block that maximises the total score less a toll per switch (Viterbi).
fn best_path(tallies: &[&Tally], blocks: usize) -> Vec<usize> {
    let parsers = tallies.len();
    let mut best: Vec<u64> = tallies.iter().map(|t| u64::from(t.scores[0])).collect();
    // came_from[block][parser]: the parser of the block before, on the best path.
    let mut came_from = vec![vec![0u16; parsers]; blocks];
    for (block, from_here) in came_from.iter_mut().enumerate().skip(1) {
        let (leader, lead) = best
            .iter()
            .enumerate()
            .max_by_key(|(index, score)| (**score, std::cmp::Reverse(*index)))
            .map(|(index, score)| (index, *score))
            .unwrap_or_default();
        for (parser, tally) in tallies.iter().enumerate() {
            let (from, score) = if best[parser] + SWITCH_TOLL >= lead {
                (parser, best[parser])
            } else {
                (leader, lead - SWITCH_TOLL)
            };
            from_here[parser] = from as u16;
            best[parser] = score + u64::from(tally.scores[block]);
        }
    }
    let mut parser = best
        .iter()
        .enumerate()
        .max_by_key(|(index, score)| (**score, std::cmp::Reverse(*index)))
        .map_or(0, |(index, _)| index);
    let mut owners = vec![0; blocks];
    for block in (0..blocks).rev() {
        owners[block] = parser;
        parser = usize::from(came_from[block][parser]);
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally from per-line scores.
    fn tally(lines: &[u32]) -> Tally {
        let mut tally = Tally::default();
        for (index, &score) in lines.iter().enumerate() {
            tally.add(index as u64, score);
        }
        tally.settle(lines.len() as u64);
        tally
    }

    fn lines(parts: &[(u32, usize)]) -> Vec<u32> {
        parts
            .iter()
            .flat_map(|&(score, count)| std::iter::repeat_n(score, count))
            .collect()
    }

    #[test]
    fn two_tools_taking_turns_are_two_regions() {
        // ruff's 40 lines, then pytest's 80; neither reads the other's.
        let ruff = tally(&lines(&[(2, 40), (0, 80)]));
        let pytest = tally(&lines(&[(0, 40), (2, 80)]));
        let regions = attribute(&[&ruff, &pytest], 1, 120).unwrap();
        let spans: Vec<_> = regions
            .iter()
            .map(|r| (r.parser, r.first_line, r.last_line))
            .collect();
        assert_eq!(spans, [(0, 1, 40), (1, 41, 120)]);
    }

    #[test]
    fn when_one_parser_reads_it_all_there_is_no_split() {
        // (what the second explains in the first part, what the first explains there):
        // the second only a little better, or the first explaining everything.
        // (score, lines) runs of the single parser, and of the other.
        type Runs = &'static [(u32, usize)];
        let table: [(Runs, Runs); 4] = [
            (&[(2, 120)], &[(0, 120)]),
            (&[(2, 120)], &[(2, 40), (0, 80)]),
            // skips of the single parser against the other's findings: 1 vs 2 is not 3x
            (&[(1, 40), (2, 80)], &[(2, 40), (0, 80)]),
            // a region of two lines is noise
            (&[(0, 2), (2, 118)], &[(2, 2), (0, 118)]),
        ];
        for (single, other) in table {
            let (single, other) = (tally(&lines(single)), tally(&lines(other)));
            assert_eq!(attribute(&[&single, &other], 0, 120), None);
        }
    }

    #[test]
    fn long_logs_merge_blocks_and_keep_the_boundary_close() {
        let n = 8 * MAX_BLOCKS * 3;
        let a = tally(&lines(&[(2, n / 2), (0, n / 2)]));
        let b = tally(&lines(&[(0, n / 2), (2, n / 2)]));
        assert_eq!(a.scores.len(), b.scores.len());
        assert!(a.scores.len() <= MAX_BLOCKS);
        let regions = attribute(&[&a, &b], 0, n as u64).unwrap();
        assert_eq!(regions.len(), 2);
        assert!(regions[0].last_line.abs_diff(n as u64 / 2) <= a.block_lines);
    }

    #[test]
    fn many_switches_are_refused() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for turn in 0..6 {
            let (x, y) = if turn % 2 == 0 { (2, 0) } else { (0, 2) };
            a.extend(std::iter::repeat_n(x, 40));
            b.extend(std::iter::repeat_n(y, 40));
        }
        assert_eq!(attribute(&[&tally(&a), &tally(&b)], 0, 240), None);
    }
}
