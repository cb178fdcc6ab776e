//! When the microphone's capture stream should be open (issue 42): the pure rule, with the
//! reason shown to the user (`dictum doctor`, the tray). The stream itself stays in
//! `dictation/microphone.rs`; this decides, that opens and closes.
//!
//! Modes:
//! - `always`: open from start-up to exit (a pre-roll before every press; the desktop's
//!   "microphone in use" indicator on all day, a Bluetooth headset held in its call profile).
//! - `on_demand`: closed while idle; a press opens it, the end of the dictation (after the
//!   post-roll) closes it. No pre-roll: the first words come from a cold open.
//! - `auto` (the default): open while dictating and for `keep_ms` after the last dictation, so
//!   a burst of dictations keeps the pre-roll; on a Bluetooth source closed right after each
//!   dictation (holding the call profile costs the user their music quality).
//!
//! Hands-free listening holds it open in every mode while it listens.
//!
//! Pure: times are milliseconds on any monotonic clock the caller passes in.

/// The `[dictation] microphone` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MicMode {
    Always,
    OnDemand,
    /// Kept open this long after the last dictation (on a non-Bluetooth source).
    Auto {
        keep_ms: u64,
    },
}

impl Default for MicMode {
    fn default() -> Self {
        MicMode::Auto { keep_ms: 180_000 }
    }
}

/// What happened, as the controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MicEvent {
    /// The key went down (or a hands-free utterance started): capture is needed now.
    Press,
    /// The dictation's audio is complete (key up and post-roll recorded, or cancelled).
    Done,
    /// Hands-free listening turned on or off.
    Listening(bool),
    /// The input device changed; `bluetooth` as the audio server reports it.
    Source { bluetooth: bool },
}

/// Why the stream is open or closed, for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MicReason {
    /// `always`.
    Always,
    Dictating,
    HandsFree,
    /// `auto`: kept for the next dictation's pre-roll, until the given time.
    KeptUntil(u64),
    /// Closed: nothing needs it.
    Idle,
    /// Closed: `auto` on a Bluetooth source closes after each dictation.
    BluetoothClosed,
}

impl MicReason {
    pub fn is_open(self) -> bool {
        matches!(
            self,
            MicReason::Always
                | MicReason::Dictating
                | MicReason::HandsFree
                | MicReason::KeptUntil(_)
        )
    }

    /// One line for `dictum doctor` and the tray.
    pub fn describe(self, now_ms: u64) -> String {
        match self {
            MicReason::Always => "open: microphone = \"always\" keeps it open".into(),
            MicReason::Dictating => "open: dictating".into(),
            MicReason::HandsFree => "open: hands-free is listening".into(),
            MicReason::KeptUntil(t) => format!(
                "open: kept {} s more after the last dictation, for the next one's pre-roll",
                t.saturating_sub(now_ms).div_ceil(1_000)
            ),
            MicReason::Idle => "closed: nothing is being dictated".into(),
            MicReason::BluetoothClosed => {
                "closed: a Bluetooth microphone is closed after each dictation, so the headset \
                 goes back to music quality (set microphone = \"always\" to keep the pre-roll)"
                    .into()
            }
        }
    }
}

/// The rule's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicPolicy {
    mode: MicMode,
    bluetooth: bool,
    dictating: bool,
    listening: bool,
    /// When the last dictation's audio was complete.
    last_done_ms: Option<u64>,
}

impl MicPolicy {
    pub fn new(mode: MicMode, bluetooth: bool) -> MicPolicy {
        MicPolicy {
            mode,
            bluetooth,
            dictating: false,
            listening: false,
            last_done_ms: None,
        }
    }

    /// The setting changed (config reload): what is under way (a dictation, listening, the
    /// keep time since the last one) stays as it is.
    pub fn set_mode(&mut self, mode: MicMode) {
        self.mode = mode;
    }

    pub fn mode(&self) -> MicMode {
        self.mode
    }

    /// A dictation is being recorded (between its `Press` and its `Done`).
    pub fn dictating(&self) -> bool {
        self.dictating
    }

    /// Hands-free listening is on.
    pub fn listening(&self) -> bool {
        self.listening
    }

    pub fn on(&mut self, event: MicEvent, now_ms: u64) {
        match event {
            MicEvent::Press => self.dictating = true,
            MicEvent::Done => {
                if self.dictating {
                    self.last_done_ms = Some(now_ms);
                }
                self.dictating = false;
            }
            MicEvent::Listening(on) => self.listening = on,
            MicEvent::Source { bluetooth } => self.bluetooth = bluetooth,
        }
    }

    /// Whether the stream should be open at `now_ms`, and why.
    pub fn state(&self, now_ms: u64) -> MicReason {
        if self.mode == MicMode::Always {
            return MicReason::Always;
        }
        if self.dictating {
            return MicReason::Dictating;
        }
        if self.listening {
            return MicReason::HandsFree;
        }
        match (self.mode, self.last_done_ms) {
            (MicMode::Auto { .. }, _) if self.bluetooth => MicReason::BluetoothClosed,
            (MicMode::Auto { keep_ms }, Some(done)) if now_ms < done.saturating_add(keep_ms) => {
                MicReason::KeptUntil(done.saturating_add(keep_ms))
            }
            _ => MicReason::Idle,
        }
    }

    /// When the answer of [`state`](Self::state) changes without an event (auto's keep time
    /// running out): the controller's next timer, or `None`.
    pub fn next_change(&self, now_ms: u64) -> Option<u64> {
        match self.state(now_ms) {
            MicReason::KeptUntil(t) => Some(t),
            _ => None,
        }
    }
}

/// Whether a source is a Bluetooth microphone, by the name the audio server gives it
/// (PulseAudio's `module-bluez5-device` and PipeWire's bluez monitor name their sources
/// `bluez_source.<address>…` / `bluez_input.<address>…`).
pub fn is_bluetooth_source(name: &str) -> bool {
    name.starts_with("bluez_source.") || name.starts_with("bluez_input.")
}

/// What keeping a Bluetooth headset's microphone open costs, for a user whose input is one
/// (`dictum doctor`, the first-run window), in the words of `mode` (`[dictation]
/// microphone`): opening it switches the headset to its call profile (music sounds like a
/// phone line until it is closed); opening it takes 1–2 s while the headset switches.
pub fn bluetooth_tradeoff(mode: MicMode, description: &str) -> String {
    let what = format!("Your microphone is a Bluetooth headset's ({description})");
    let cold = "each press then opens it, which takes 1–2 s while the headset switches \
                profile: the indicator says \"waiting for the microphone\" until it hears \
                you, so start speaking at the cue";
    match mode {
        MicMode::Always => format!(
            "{what}. `microphone = \"always\"` keeps it open for as long as Dictum runs, \
             which holds the headset in its call profile: music and calls sound like a phone \
             line all day. \"auto\" closes it after each dictation (the headset goes back \
             to music quality); {cold}."
        ),
        MicMode::OnDemand | MicMode::Auto { .. } => format!(
            "{what}. Dictum opens it only while you dictate and closes it right after, so \
             the headset goes back to music quality in between; {cold}. \
             `microphone = \"always\"` keeps it ready (a pre-roll before each press) but \
             holds the headset in call quality all day."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP: u64 = 180_000;

    fn auto(bluetooth: bool) -> MicPolicy {
        MicPolicy::new(MicMode::Auto { keep_ms: KEEP }, bluetooth)
    }

    #[test]
    fn always_is_open_from_start_to_end() {
        let mut p = MicPolicy::new(MicMode::Always, true);
        assert_eq!(p.state(0), MicReason::Always);
        p.on(MicEvent::Press, 10);
        p.on(MicEvent::Done, 20);
        assert!(p.state(10_000_000).is_open());
        assert_eq!(p.next_change(20), None);
    }

    #[test]
    fn on_demand_opens_for_a_dictation_only() {
        let mut p = MicPolicy::new(MicMode::OnDemand, false);
        assert_eq!(p.state(0), MicReason::Idle);
        p.on(MicEvent::Press, 1_000);
        assert_eq!(p.state(1_000), MicReason::Dictating);
        p.on(MicEvent::Done, 4_000);
        assert_eq!(p.state(4_000), MicReason::Idle);
        assert_eq!(p.next_change(4_000), None);
    }

    #[test]
    fn auto_keeps_it_open_for_a_burst_then_closes() {
        let mut p = auto(false);
        assert_eq!(
            p.state(0),
            MicReason::Idle,
            "closed before the first dictation"
        );
        p.on(MicEvent::Press, 1_000);
        p.on(MicEvent::Done, 5_000);
        assert_eq!(p.state(5_000), MicReason::KeptUntil(5_000 + KEEP));
        assert_eq!(p.next_change(5_000), Some(5_000 + KEEP));
        // A second dictation inside the keep time starts the count again from its end.
        p.on(MicEvent::Press, 60_000);
        assert_eq!(p.state(60_000), MicReason::Dictating);
        p.on(MicEvent::Done, 62_000);
        assert!(p.state(5_000 + KEEP).is_open());
        assert_eq!(
            p.state(62_000 + KEEP - 1),
            MicReason::KeptUntil(62_000 + KEEP)
        );
        assert_eq!(p.state(62_000 + KEEP), MicReason::Idle);
        assert_eq!(p.next_change(62_000 + KEEP), None);
    }

    #[test]
    fn auto_on_bluetooth_closes_right_after_each_dictation() {
        let mut p = auto(true);
        p.on(MicEvent::Press, 0);
        assert_eq!(p.state(0), MicReason::Dictating);
        p.on(MicEvent::Done, 3_000);
        assert_eq!(p.state(3_000), MicReason::BluetoothClosed);
        assert!(!p.state(3_000).is_open());
        // The headset unplugged for the laptop's microphone: the keep time applies again.
        p.on(MicEvent::Source { bluetooth: false }, 4_000);
        assert_eq!(p.state(4_000), MicReason::KeptUntil(3_000 + KEEP));
    }

    #[test]
    fn hands_free_holds_it_open_in_every_closing_mode() {
        for mode in [MicMode::OnDemand, MicMode::Auto { keep_ms: KEEP }] {
            let mut p = MicPolicy::new(mode, true);
            p.on(MicEvent::Listening(true), 0);
            assert_eq!(p.state(10_000_000), MicReason::HandsFree, "{mode:?}");
            p.on(MicEvent::Press, 1);
            p.on(MicEvent::Done, 2);
            assert_eq!(p.state(3), MicReason::HandsFree, "{mode:?}");
            p.on(MicEvent::Listening(false), 4);
            assert!(!p.state(4).is_open(), "{mode:?}");
        }
    }

    #[test]
    fn the_bluetooth_tradeoff_names_the_cost_of_each_choice() {
        let always = bluetooth_tradeoff(MicMode::Always, "Jabra Evolve 65");
        assert!(always.contains("(Jabra Evolve 65)"), "{always}");
        assert!(
            always.contains("call profile") && always.contains("all day"),
            "{always}"
        );
        assert!(always.contains("\"auto\" closes it"), "{always}");
        for mode in [MicMode::OnDemand, MicMode::default()] {
            let t = bluetooth_tradeoff(mode, "WH-1000XM4");
            assert!(t.contains("closes it right after"), "{t}");
            assert!(t.contains("1–2 s") && t.contains("at the cue"), "{t}");
            assert!(t.contains("\"always\""), "{t}");
        }
    }

    #[test]
    fn bluetooth_sources_are_told_by_their_server_name() {
        assert!(is_bluetooth_source(
            "bluez_source.00_1B_66_AA_BB_CC.handsfree_head_unit"
        ));
        assert!(is_bluetooth_source("bluez_input.00:1B:66:AA:BB:CC.0"));
        assert!(!is_bluetooth_source(
            "alsa_input.pci-0000_00_1f.3.analog-stereo"
        ));
        assert!(!is_bluetooth_source("virtmic"));
    }

    #[test]
    fn a_mode_change_keeps_what_is_under_way() {
        let mut p = MicPolicy::new(MicMode::Always, false);
        p.on(MicEvent::Press, 0);
        p.set_mode(MicMode::OnDemand);
        assert_eq!(p.state(1), MicReason::Dictating);
        p.on(MicEvent::Done, 2);
        assert_eq!(p.state(3), MicReason::Idle);
        p.set_mode(MicMode::Auto { keep_ms: 10 });
        assert_eq!(p.state(3), MicReason::KeptUntil(12));
    }

    #[test]
    fn a_done_without_a_press_does_not_start_the_keep_time() {
        // A cancelled start-up or a stray Done must not open a closed microphone.
        let mut p = auto(false);
        p.on(MicEvent::Done, 1_000);
        assert_eq!(p.state(1_000), MicReason::Idle);
    }

    #[test]
    fn every_reason_says_open_or_closed_in_words() {
        let reasons = [
            MicReason::Always,
            MicReason::Dictating,
            MicReason::HandsFree,
            MicReason::KeptUntil(5_500),
            MicReason::Idle,
            MicReason::BluetoothClosed,
        ];
        for r in reasons {
            let line = r.describe(1_000);
            let word = if r.is_open() { "open:" } else { "closed:" };
            assert!(line.starts_with(word), "{r:?}: {line}");
        }
        assert!(MicReason::KeptUntil(5_500)
            .describe(1_000)
            .contains("kept 5 s"));
    }
}
