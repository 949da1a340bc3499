//! When a digest is sent (SPEC section 11): wall-clock send times on some days of the
//! week, in one time zone.
//!
//! # Grammar
//!
//! ```text
//! [TZ=<IANA zone> | CRON_TZ=<IANA zone>]  <days>  <HH:MM>[,<HH:MM>…]
//! ```
//!
//! The parts are separated by whitespace; spaces next to a comma or a hyphen are ignored,
//! so `Sat, Sun 09:00, 17:00` reads as `Sat,Sun 09:00,17:00`. At most
//! [`Schedule::MAX_LEN`] bytes.
//!
//! - **Zone** (optional, default `UTC`): `TZ=` or `CRON_TZ=` (either in any letter case)
//!   and a zone of the IANA database embedded by `chrono-tz` (no zoneinfo file is read at
//!   run time). The name is matched exactly, or failing that ignoring ASCII case
//!   (`tz=europe/berlin` is `Europe/Berlin`); links such as `US/Pacific` are kept as
//!   written.
//! - **Days**: a comma list of days and ranges. A day is `Mon`, `Tue`, `Wed`, `Thu`,
//!   `Fri`, `Sat`, `Sun` or the full English name (`Monday`), in any letter case. A range
//!   `A-B` runs from `A` to `B` inclusive and wraps past the end of the week: `Fri-Mon` is
//!   Friday, Saturday, Sunday and Monday; `Wed-Wed` is Wednesday alone. `*` or `daily`,
//!   standing alone, is every day (a common cron habit, so it is accepted rather than
//!   refused; it is written back as `Mon-Sun`).
//! - **Times**: one to [`Schedule::MAX_TIMES`] comma-separated `HH:MM` (exactly two ASCII
//!   digits each, `00:00` to `23:59`), kept sorted and without duplicates.
//!
//! A refused schedule is a [`ScheduleError`] whose message starts `schedule: ` and names
//! the offending token (at most 40 characters of it, control characters removed).
//!
//! [`Schedule`]'s `Display` is the canonical form: always with `TZ=`, the days as
//! ranges and lists starting from Monday (a range that wraps past Sunday comes first:
//! `Fri-Mon,Wed`), the times sorted; `parse` of it gives back an equal value.
//!
//! # Firing
//!
//! Every local date in the zone whose weekday is in the day set, at every send time, is
//! one send. The wall-clock time is resolved in the zone with chrono-tz:
//!
//! - a time that exists once is sent at that instant;
//! - a time that occurs twice (the repeated hour when clocks fall back) is sent once, at
//!   its earlier occurrence;
//! - a time that does not exist (skipped when clocks spring forward) is sent once, at the
//!   instant the gap ends: 02:30 on Los Angeles' spring-forward day is sent at 03:00 PDT.
//!
//! Send times that land on the same instant (02:00 and 02:30 both inside that gap) are one
//! send. The zone rules are chrono-tz's copy of the IANA database (tabulated to 2099).

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Days, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

/// A parsed digest schedule: a zone, a non-empty set of weekdays and one or more
/// wall-clock send times. Made only by [`Schedule::parse`], so every value is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schedule {
    zone: Tz,
    /// Bit `n` set: sent on the weekday `n` days after Monday. Never 0.
    days: u8,
    /// `(hour, minute)`, sorted, without duplicates; 1 to `MAX_TIMES` of them.
    times: Vec<(u8, u8)>,
}

/// Every day of the week as a day set.
const EVERY_DAY: u8 = 0b111_1111;

/// Each weekday's written name and full name, Monday first.
const DAY_NAMES: [(&str, &str); 7] = [
    ("Mon", "Monday"),
    ("Tue", "Tuesday"),
    ("Wed", "Wednesday"),
    ("Thu", "Thursday"),
    ("Fri", "Friday"),
    ("Sat", "Saturday"),
    ("Sun", "Sunday"),
];

/// How many characters of an offending token an error message repeats.
const ECHO_MAX_CHARS: usize = 40;

impl Schedule {
    /// The longest schedule accepted, in bytes.
    pub const MAX_LEN: usize = 200;

    /// The most send times a schedule may have (after removing duplicates).
    pub const MAX_TIMES: usize = 24;

    /// The most instants [`Schedule::between`] returns.
    pub const MAX_BETWEEN: usize = 1_000;

    /// Parses a schedule (grammar in the module documentation), refusing it with the
    /// field and the offending token named.
    pub fn parse(spec: &str) -> Result<Schedule, ScheduleError> {
        if spec.len() > Self::MAX_LEN {
            return Err(ScheduleError::TooLong(spec.len()));
        }
        let tokens = tokens(spec);
        let mut rest = tokens.iter().map(String::as_str);
        let Some(first) = rest.next() else {
            return Err(ScheduleError::Empty);
        };

        let (zone, days_token) = match zone_prefix(first) {
            Some((prefix, name)) => {
                if name.is_empty() {
                    return Err(ScheduleError::MissingZone(echo(prefix)));
                }
                let zone = lookup_zone(name).ok_or_else(|| ScheduleError::UnknownZone(echo(name)))?;
                let days_token = rest.next().ok_or_else(|| ScheduleError::Incomplete(echo(first)))?;
                (zone, days_token)
            }
            None => (Tz::UTC, first),
        };

        if days_token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(ScheduleError::MissingDays(echo(days_token)));
        }
        let days = parse_days(days_token)?;
        let times_token = rest.next().ok_or_else(|| ScheduleError::MissingTimes(echo(days_token)))?;
        let times = parse_times(times_token)?;
        if let Some(extra) = rest.next() {
            return Err(if parse_times(extra).is_ok() {
                ScheduleError::TimesNotCommaSeparated(echo(extra))
            } else {
                ScheduleError::Unexpected(echo(extra))
            });
        }
        Ok(Schedule { zone, days, times })
    }

    /// The first send instant strictly after `after`.
    ///
    /// Consecutive calls, each given the previous answer, walk every send in order, none
    /// twice and none skipped. At the very end of chrono's range (the year 262 143), where
    /// no later send exists, answers `DateTime::<Utc>::MAX_UTC` (never a send itself: it is
    /// not on a whole minute).
    pub fn next_after(&self, after: DateTime<Utc>) -> DateTime<Utc> {
        let after_day = match self.local_at(after) {
            Some(local) => local.date(),
            None if after.year() > 0 => return DateTime::<Utc>::MAX_UTC,
            None => NaiveDate::MIN,
        };
        // A date's sends fall on that local date, or later when a gap pushes them on (by
        // at most a day, as when Samoa skipped 30 December 2011); so three days back and
        // a week and two days ahead hold the next send, and the scan stops once dates are
        // past the best one found.
        let mut day = after_day.checked_sub_days(Days::new(3)).unwrap_or(after_day);
        let last_day = after_day.checked_add_days(Days::new(9)).unwrap_or(NaiveDate::MAX);
        let mut best: Option<(DateTime<Utc>, NaiveDate)> = None;
        while day <= last_day {
            if best.is_some_and(|(_, best_day)| best_day.checked_add_days(Days::new(2)).is_some_and(|end| day > end)) {
                break;
            }
            if self.sends_on(day) {
                for &(hour, minute) in &self.times {
                    let Some(at) = self.resolve(day, hour, minute) else { continue };
                    if at > after && best.is_none_or(|(best_at, _)| at < best_at) {
                        best = Some((at, self.local_at(at).map_or(day, |local| local.date())));
                    }
                }
            }
            match day.succ_opt() {
                Some(next) => day = next,
                None => break,
            }
        }
        best.map_or(DateTime::<Utc>::MAX_UTC, |(at, _)| at)
    }

    /// Every send instant in `(from, to]`, in order: what was missed while no instance
    /// ran, or what a range of time holds.
    ///
    /// Bounded: at most [`Schedule::MAX_BETWEEN`] instants, the earliest ones of the range
    /// (about six weeks of the densest schedule, 24 times a day). A caller after the
    /// latest sends of a long outage asks for a recent range, e.g. `(now - 1 h, now]`.
    pub fn between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let mut sends = Vec::new();
        let mut at = from;
        while sends.len() < Self::MAX_BETWEEN {
            let next = self.next_after(at);
            if next > to || next == DateTime::<Utc>::MAX_UTC {
                break;
            }
            sends.push(next);
            at = next;
        }
        sends
    }

    /// The zone's IANA name, e.g. `America/Los_Angeles` (`UTC` when none was given).
    pub fn zone_name(&self) -> &str {
        self.zone.name()
    }

    /// The zone, to show an instant in the schedule's own wall-clock time
    /// (`instant.with_timezone(&schedule.zone())`).
    pub fn zone(&self) -> Tz {
        self.zone
    }

    /// The wall-clock time in the zone at an instant (as chrono's `naive_local`, but
    /// `None` rather than a panic where it falls outside chrono's range).
    fn local_at(&self, at: DateTime<Utc>) -> Option<NaiveDateTime> {
        let offset = self.zone.offset_from_utc_datetime(&at.naive_utc()).fix();
        at.naive_utc().checked_add_offset(offset)
    }

    /// Whether the day set holds the weekday of this local date.
    fn sends_on(&self, day: NaiveDate) -> bool {
        self.days & (1 << day.weekday().num_days_from_monday()) != 0
    }

    /// The instant a wall-clock time on a local date is sent at (see "Firing" in the
    /// module documentation). `None` only at the edges of chrono's range.
    fn resolve(&self, day: NaiveDate, hour: u8, minute: u8) -> Option<DateTime<Utc>> {
        let local = day.and_hms_opt(u32::from(hour), u32::from(minute), 0)?;
        match self.zone.from_local_datetime(&local) {
            LocalResult::Single(at) => Some(at.with_timezone(&Utc)),
            LocalResult::Ambiguous(first, second) => Some(first.min(second).with_timezone(&Utc)),
            LocalResult::None => self.gap_end(local),
        }
    }

    /// For a wall-clock time the zone skips: the instant the gap ends, i.e. the first
    /// instant whose local time is later than `local`. Found by bisecting UTC seconds,
    /// asking chrono-tz for the local time at each (zone transitions fall on whole
    /// seconds): two days either side hold it, as no zone is a day or more away from UTC.
    fn gap_end(&self, local: NaiveDateTime) -> Option<DateTime<Utc>> {
        const TWO_DAYS: i64 = 2 * 86_400;
        let shows_later = |seconds: i64| {
            DateTime::from_timestamp(seconds, 0).and_then(|at| self.local_at(at)).map(|seen| seen > local)
        };
        let centre = local.and_utc().timestamp();
        let (mut before, mut after) = (centre - TWO_DAYS, centre + TWO_DAYS);
        if shows_later(before)? || !shows_later(after)? {
            return None;
        }
        while after - before > 1 {
            let mid = before + (after - before) / 2;
            if shows_later(mid)? {
                after = mid;
            } else {
                before = mid;
            }
        }
        DateTime::from_timestamp(after, 0)
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        Schedule::parse(spec)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TZ={} ", self.zone.name())?;
        write_days(f, self.days)?;
        for (i, (hour, minute)) in self.times.iter().enumerate() {
            let separator = if i == 0 { ' ' } else { ',' };
            write!(f, "{separator}{hour:02}:{minute:02}")?;
        }
        Ok(())
    }
}

/// Writes a day set as ranges (three or more days) and single days, comma-separated,
/// from Monday; a run that wraps from Sunday into Monday is written first, as one range.
fn write_days(f: &mut fmt::Formatter<'_>, days: u8) -> fmt::Result {
    if days == EVERY_DAY {
        return f.write_str("Mon-Sun");
    }
    let has = |d: usize| days & (1 << (d % 7)) != 0;
    // Start where a run starts: Monday, unless Monday continues a run from Sunday; then
    // walk back to that run's first day (some day is missing, so the walk ends).
    let mut start = 0;
    if has(0) && has(6) {
        start = 6;
        while has(start + 6) {
            start = (start + 6) % 7;
        }
    }
    let mut first = true;
    let mut offset = 0;
    while offset < 7 {
        let d = start + offset;
        if !has(d) {
            offset += 1;
            continue;
        }
        let mut len = 1;
        while offset + len < 7 && has(d + len) {
            len += 1;
        }
        if !first {
            f.write_str(",")?;
        }
        first = false;
        let (from, to) = (DAY_NAMES[d % 7].0, DAY_NAMES[(d + len - 1) % 7].0);
        match len {
            1 => f.write_str(from)?,
            2 => write!(f, "{from},{to}")?,
            _ => write!(f, "{from}-{to}")?,
        }
        offset += len;
    }
    Ok(())
}

/// Splits on whitespace, joining across whitespace next to a comma or a hyphen.
fn tokens(spec: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    for piece in spec.split_whitespace() {
        match tokens.last_mut() {
            Some(last) if last.ends_with([',', '-']) || piece.starts_with([',', '-']) => last.push_str(piece),
            _ => tokens.push(piece.to_owned()),
        }
    }
    tokens
}

/// `TZ=<zone>` or `CRON_TZ=<zone>` in any letter case: the prefix as written and the zone.
fn zone_prefix(token: &str) -> Option<(&str, &str)> {
    ["TZ=", "CRON_TZ="].into_iter().find_map(|prefix| {
        let head = token.get(..prefix.len())?;
        let zone = token.get(prefix.len()..)?;
        head.eq_ignore_ascii_case(prefix).then_some((head, zone))
    })
}

/// An IANA zone by its exact name, or failing that ignoring ASCII case.
fn lookup_zone(name: &str) -> Option<Tz> {
    name.parse::<Tz>()
        .ok()
        .or_else(|| chrono_tz::TZ_VARIANTS.iter().copied().find(|zone| zone.name().eq_ignore_ascii_case(name)))
}

/// A day spec: a comma list of days and wrapping ranges, or `*` / `daily` alone.
fn parse_days(token: &str) -> Result<u8, ScheduleError> {
    let every_day = |s: &str| s == "*" || s.eq_ignore_ascii_case("daily");
    if every_day(token) {
        return Ok(EVERY_DAY);
    }
    let mut days = 0;
    for item in token.split(',') {
        if every_day(item) {
            return Err(ScheduleError::EveryDayInList(echo(item)));
        }
        let mut ends = item.split('-');
        match (ends.next(), ends.next(), ends.next()) {
            (Some(""), None, _) | (Some(_), Some(""), None) | (Some(""), Some(_), None) => {
                return Err(ScheduleError::EmptyDay(echo(token)));
            }
            (Some(day), None, _) => days |= 1 << parse_day(day)?,
            (Some(from), Some(to), None) => {
                let (mut day, to) = (parse_day(from)?, parse_day(to)?);
                days |= 1 << day;
                while day != to {
                    day = (day + 1) % 7;
                    days |= 1 << day;
                }
            }
            _ => return Err(ScheduleError::BadRange(echo(item))),
        }
    }
    Ok(days)
}

/// A day's position from Monday (0) to Sunday (6).
fn parse_day(name: &str) -> Result<u8, ScheduleError> {
    (0u8..)
        .zip(DAY_NAMES)
        .find(|(_, (short, long))| name.eq_ignore_ascii_case(short) || name.eq_ignore_ascii_case(long))
        .map(|(day, _)| day)
        .ok_or_else(|| ScheduleError::UnknownDay(echo(name)))
}

/// Comma-separated `HH:MM` times, sorted and without duplicates.
fn parse_times(token: &str) -> Result<Vec<(u8, u8)>, ScheduleError> {
    let mut times = Vec::new();
    for item in token.split(',') {
        if item.is_empty() {
            return Err(ScheduleError::EmptyTime(echo(token)));
        }
        times.push(parse_time(item)?);
    }
    times.sort_unstable();
    times.dedup();
    if times.len() > Schedule::MAX_TIMES {
        return Err(ScheduleError::TooManyTimes(times.len()));
    }
    Ok(times)
}

/// One `HH:MM`: two ASCII digits, a colon, two ASCII digits, within a day.
fn parse_time(item: &str) -> Result<(u8, u8), ScheduleError> {
    let parsed = match item.as_bytes() {
        &[h1, h0, b':', m1, m0] => two_digits(h1, h0).zip(two_digits(m1, m0)),
        _ => None,
    };
    let (hour, minute) = parsed.ok_or_else(|| ScheduleError::BadTime(echo(item)))?;
    if hour > 23 {
        return Err(ScheduleError::HourOutOfRange(hour.into()));
    }
    if minute > 59 {
        return Err(ScheduleError::MinuteOutOfRange(minute.into()));
    }
    Ok((hour, minute))
}

/// The number two ASCII digits write, if both are digits.
fn two_digits(tens: u8, ones: u8) -> Option<u8> {
    (tens.is_ascii_digit() && ones.is_ascii_digit()).then(|| (tens - b'0') * 10 + (ones - b'0'))
}

/// What an error message repeats of the input: control characters removed, at most
/// `ECHO_MAX_CHARS` characters, `…` when cut.
fn echo(token: &str) -> String {
    let mut shown = token.chars().filter(|c| !c.is_control());
    let mut echoed: String = shown.by_ref().take(ECHO_MAX_CHARS).collect();
    if shown.next().is_some() {
        echoed.push('…');
    }
    echoed
}

/// Why a schedule was refused. Displays as `schedule: <reason>`, naming the offending
/// token; [`ScheduleError::field`] and [`ScheduleError::reason`] split it for the
/// service's `invalid_argument` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Nothing but whitespace.
    #[error("schedule: empty (expected e.g. \"Mon-Fri 09:00\")")]
    Empty,
    /// Longer than [`Schedule::MAX_LEN`] bytes (the length given).
    #[error("schedule: longer than {max} bytes (got {0})", max = Schedule::MAX_LEN)]
    TooLong(usize),
    /// `TZ=` or `CRON_TZ=` (as written) with no zone after it.
    #[error("schedule: time zone missing after {0:?}")]
    MissingZone(String),
    /// A zone the embedded IANA database does not know.
    #[error("schedule: unknown time zone {0:?}")]
    UnknownZone(String),
    /// A zone prefix (as written) and nothing after it.
    #[error("schedule: days and send times missing after {0:?} (expected e.g. \"Mon-Fri 09:00\")")]
    Incomplete(String),
    /// A time where the days belong.
    #[error("schedule: days missing before {0:?} (expected e.g. Mon-Fri, Sat,Sun or daily)")]
    MissingDays(String),
    /// Days (as written) and no send time after them.
    #[error("schedule: send times missing after {0:?} (expected HH:MM, e.g. 09:00,17:00)")]
    MissingTimes(String),
    /// Not a day name.
    #[error("schedule: unknown day {0:?}")]
    UnknownDay(String),
    /// A day spec (as written) with an empty item or range end, as in `Mon,,Tue` or `Mon-`.
    #[error("schedule: empty day in {0:?}")]
    EmptyDay(String),
    /// A range with more than two ends, as in `Mon-Wed-Fri`.
    #[error("schedule: day range {0:?} is not Day-Day")]
    BadRange(String),
    /// `*` or `daily` inside a comma list.
    #[error("schedule: {0:?} means every day and stands alone, not in a list")]
    EveryDayInList(String),
    /// A time list (as written) with an empty item, as in `09:00,,17:00`.
    #[error("schedule: empty send time in {0:?}")]
    EmptyTime(String),
    /// Not of the form `HH:MM` with two digits each.
    #[error("schedule: time {0:?} is not HH:MM")]
    BadTime(String),
    /// An hour above 23.
    #[error("schedule: hour {0} out of range")]
    HourOutOfRange(u32),
    /// A minute above 59.
    #[error("schedule: minute {0} out of range")]
    MinuteOutOfRange(u32),
    /// More than [`Schedule::MAX_TIMES`] distinct send times (how many were given).
    #[error("schedule: more than {max} send times (got {0})", max = Schedule::MAX_TIMES)]
    TooManyTimes(usize),
    /// Something after the send times.
    #[error("schedule: unexpected {0:?} after the send times")]
    Unexpected(String),
    /// More send times after the send times, separated by a space instead of a comma.
    #[error("schedule: unexpected {0:?} after the send times (separate send times with commas)")]
    TimesNotCommaSeparated(String),
}

/// What `Display` writes before the reason.
const ERROR_PREFIX: &str = "schedule: ";

impl ScheduleError {
    /// The refused field's name: always `"schedule"`.
    pub fn field(&self) -> &'static str {
        "schedule"
    }

    /// The message after `schedule: `, e.g. `hour 25 out of range`.
    pub fn reason(&self) -> String {
        let message = self.to_string();
        match message.strip_prefix(ERROR_PREFIX) {
            Some(reason) => reason.to_owned(),
            None => message,
        }
    }
}

#[cfg(test)]
mod tests;
