//! The preprocessing on arbitrary bytes: the line assembler and its CI framing stage (look-ahead,
//! prefixes, markers, GitLab continuations) fed whole and in chunks of odd sizes. Byte 0 picks
//! the line-cut length, byte 1 the chunk sizes; the rest is the output. The lines and the
//! framing report must not depend on how the output was chunked, and no line may hold a `\n`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refine_loop::parse::{FrameReport, LineAssembler};

/// The lines and report of `data` fed in chunks whose sizes come from `seed` (0: whole).
fn assemble(data: &[u8], max_line: usize, seed: u8) -> (Vec<String>, FrameReport, u64) {
    let mut assembler = LineAssembler::new(max_line);
    let mut lines = Vec::new();
    let mut rest = data;
    let mut state = u32::from(seed);
    while !rest.is_empty() {
        let size = if seed == 0 {
            rest.len()
        } else {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            1 + (state >> 16) as usize % (usize::from(seed) * 3)
        };
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        assembler.push(chunk, &mut |line| lines.push(line.to_string()));
        rest = tail;
    }
    assembler.finish(&mut |line| lines.push(line.to_string()));
    (lines, assembler.framing().clone(), assembler.lines_cut())
}

fuzz_target!(|data: &[u8]| {
    let [cut_knob, chunk_knob, output @ ..] = data else {
        return;
    };
    // Lines cut anywhere from 1 byte to the real limit.
    let max_line = match cut_knob {
        0 => refine_loop::parse::MAX_LINE_BYTES,
        knob => usize::from(*knob) * 4,
    };
    let whole = assemble(output, max_line, 0);
    let chunked = assemble(output, max_line, chunk_knob.max(&1).to_owned());
    assert_eq!(whole, chunked, "chunking changed the lines");
    assert!(whole.0.iter().all(|line| !line.contains('\n')));
});
