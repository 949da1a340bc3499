use chrono::{Duration, NaiveTime, Weekday};
use proptest::prelude::*;

use super::*;

fn utc(instant: &str) -> DateTime<Utc> {
    instant.parse().unwrap()
}

fn schedule(spec: &str) -> Schedule {
    Schedule::parse(spec).unwrap_or_else(|e| panic!("{spec:?}: {e}"))
}

fn refusal(spec: &str) -> String {
    match Schedule::parse(spec) {
        Ok(parsed) => panic!("{spec:?} was accepted as {parsed}"),
        Err(e) => e.to_string(),
    }
}

/// The weekdays of a day set, Monday first.
fn weekdays(s: &Schedule) -> Vec<Weekday> {
    (0..7).filter(|d| s.days & (1 << d) != 0).map(|d| Weekday::try_from(d as u8).unwrap()).collect()
}

// ----- parsing: the table -----

#[test]
fn valid_specs_parse_into_their_canonical_form() {
    let table: &[(&str, &str)] = &[
        ("TZ=America/Los_Angeles Mon-Fri 09:00,17:00", "TZ=America/Los_Angeles Mon-Fri 09:00,17:00"),
        ("CRON_TZ=America/Los_Angeles Mon-Fri 09:00,17:00", "TZ=America/Los_Angeles Mon-Fri 09:00,17:00"),
        ("Sat,Sun 10:30", "TZ=UTC Sat,Sun 10:30"),
        ("Fri-Mon 08:00", "TZ=UTC Fri-Mon 08:00"),
        ("Mon,Wed-Fri 07:15,12:00", "TZ=UTC Mon,Wed-Fri 07:15,12:00"),
        ("mon-FRI 09:00", "TZ=UTC Mon-Fri 09:00"),
        ("Monday-Friday 09:00", "TZ=UTC Mon-Fri 09:00"),
        ("daily 06:00", "TZ=UTC Mon-Sun 06:00"),
        ("DAILY 06:00", "TZ=UTC Mon-Sun 06:00"),
        ("* 06:00", "TZ=UTC Mon-Sun 06:00"),
        ("Mon-Sun 00:00,23:59", "TZ=UTC Mon-Sun 00:00,23:59"),
        ("Sun-Sat 12:00", "TZ=UTC Mon-Sun 12:00"),
        ("Tue-Mon 12:00", "TZ=UTC Mon-Sun 12:00"),
        ("Wed-Wed 12:00", "TZ=UTC Wed 12:00"),
        ("Mon,Mon,mon 12:00", "TZ=UTC Mon 12:00"),
        ("Mon 17:00,09:00,17:00", "TZ=UTC Mon 09:00,17:00"),
        ("  TZ=Europe/Berlin \t Tue   08:00  ", "TZ=Europe/Berlin Tue 08:00"),
        ("tz=europe/berlin Tue 08:00", "TZ=Europe/Berlin Tue 08:00"),
        ("cron_tz=Australia/Sydney Tue,Thu 06:45", "TZ=Australia/Sydney Tue,Thu 06:45"),
        ("TZ=UTC Mon 09:00", "TZ=UTC Mon 09:00"),
        ("TZ=Etc/UTC Mon 09:00", "TZ=Etc/UTC Mon 09:00"),
        ("TZ=US/Pacific Mon 09:00", "TZ=US/Pacific Mon 09:00"),
        ("TZ=Asia/Kolkata Mon 09:00", "TZ=Asia/Kolkata Mon 09:00"),
        ("Sat, Sun 10:30", "TZ=UTC Sat,Sun 10:30"),
        ("Mon - Fri 09:00, 17:00", "TZ=UTC Mon-Fri 09:00,17:00"),
        ("Sun,Mon,Wed 09:00", "TZ=UTC Sun,Mon,Wed 09:00"),
        ("Wed,Sat-Mon 09:00", "TZ=UTC Sat-Mon,Wed 09:00"),
        ("Thu-Tue 09:00", "TZ=UTC Thu-Tue 09:00"),
        ("Mon,Tue,Wed 09:00", "TZ=UTC Mon-Wed 09:00"),
        ("Mon,Tue,Thu 09:00", "TZ=UTC Mon,Tue,Thu 09:00"),
        ("Fri-Sun,Mon-Tue 09:00", "TZ=UTC Fri-Tue 09:00"),
    ];
    for (spec, canonical) in table {
        let parsed = schedule(spec);
        assert_eq!(parsed.to_string(), *canonical, "{spec:?}");
        assert_eq!(schedule(canonical), parsed, "{canonical:?} does not parse back to {spec:?}'s value");
    }
}

#[test]
fn invalid_specs_are_refused_naming_the_field_and_the_token() {
    let table: &[(&str, &str)] = &[
        ("", "schedule: empty (expected e.g. \"Mon-Fri 09:00\")"),
        (" \t\n ", "schedule: empty (expected e.g. \"Mon-Fri 09:00\")"),
        ("Mon-Fri 25:00", "schedule: hour 25 out of range"),
        ("Mon-Fri 24:00", "schedule: hour 24 out of range"),
        ("Mon 09:60", "schedule: minute 60 out of range"),
        ("Mon 99:99", "schedule: hour 99 out of range"),
        ("TZ=Mars/Base Mon-Fri 09:00", "schedule: unknown time zone \"Mars/Base\""),
        ("TZ=../../etc/passwd Mon 09:00", "schedule: unknown time zone \"../../etc/passwd\""),
        ("TZ= Mon 09:00", "schedule: time zone missing after \"TZ=\""),
        ("cron_tz= Mon 09:00", "schedule: time zone missing after \"cron_tz=\""),
        (
            "TZ=Europe/Berlin",
            "schedule: days and send times missing after \"TZ=Europe/Berlin\" (expected e.g. \"Mon-Fri 09:00\")",
        ),
        ("Mon-Fry 09:00", "schedule: unknown day \"Fry\""),
        ("Lun 09:00", "schedule: unknown day \"Lun\""),
        ("Mo 09:00", "schedule: unknown day \"Mo\""),
        ("Mon,,Tue 09:00", "schedule: empty day in \"Mon,,Tue\""),
        ("Mon, 09:00", "schedule: unknown day \"09:00\""),
        ("-Fri 09:00", "schedule: empty day in \"-Fri\""),
        ("Mon-Wed-Fri 09:00", "schedule: day range \"Mon-Wed-Fri\" is not Day-Day"),
        ("Mon,* 09:00", "schedule: \"*\" means every day and stands alone, not in a list"),
        ("Mon-Fri", "schedule: send times missing after \"Mon-Fri\" (expected HH:MM, e.g. 09:00,17:00)"),
        ("09:00", "schedule: days missing before \"09:00\" (expected e.g. Mon-Fri, Sat,Sun or daily)"),
        ("TZ=UTC 09:00 Mon", "schedule: days missing before \"09:00\" (expected e.g. Mon-Fri, Sat,Sun or daily)"),
        ("Mon 9am", "schedule: time \"9am\" is not HH:MM"),
        ("Mon 9:00", "schedule: time \"9:00\" is not HH:MM"),
        ("Mon 0900", "schedule: time \"0900\" is not HH:MM"),
        ("Mon 09:00:00", "schedule: time \"09:00:00\" is not HH:MM"),
        ("Mon +9:00", "schedule: time \"+9:00\" is not HH:MM"),
        ("Mon ١٢:٠٠", "schedule: time \"١٢:٠٠\" is not HH:MM"),
        ("Mon Tue 09:00", "schedule: time \"Tue\" is not HH:MM"),
        ("Mon 09:00,,17:00", "schedule: empty send time in \"09:00,,17:00\""),
        ("Mon 09:00 extra", "schedule: unexpected \"extra\" after the send times"),
        ("Mon 09:00 TZ=UTC", "schedule: unexpected \"TZ=UTC\" after the send times"),
        ("Mon 09:00 17:00", "schedule: unexpected \"17:00\" after the send times (separate send times with commas)"),
        ("Mon 09:0\u{1b}[31m0", "schedule: time \"09:0[31m0\" is not HH:MM"),
    ];
    for (spec, message) in table {
        assert_eq!(refusal(spec), *message, "{spec:?}");
    }
}

#[test]
fn a_spec_longer_than_200_bytes_is_refused_before_it_is_read() {
    let spec = format!("Mon 09:00{}", " ".repeat(192));
    assert_eq!(spec.len(), 201);
    assert_eq!(refusal(&spec), "schedule: longer than 200 bytes (got 201)");
    let at_the_limit = format!("Mon 09:00{}", " ".repeat(191));
    assert_eq!(schedule(&at_the_limit).to_string(), "TZ=UTC Mon 09:00");
}

#[test]
fn twenty_four_send_times_are_accepted_and_twenty_five_are_refused() {
    let hours: Vec<String> = (0..24).map(|h| format!("{h:02}:00")).collect();
    let day = schedule(&format!("Mon {}", hours.join(",")));
    assert_eq!(day.times.len(), 24);
    assert_eq!(refusal(&format!("Mon {},23:30", hours.join(","))), "schedule: more than 24 send times (got 25)");
    // Duplicates do not count.
    assert_eq!(schedule(&format!("Mon {},00:00,12:00", hours.join(","))).times.len(), 24);
}

#[test]
fn an_echoed_token_is_cut_at_40_characters_and_loses_its_control_characters() {
    let long = "x".repeat(100);
    assert_eq!(refusal(&format!("Mon {long}")), format!("schedule: time \"{}…\" is not HH:MM", "x".repeat(40)));
    assert_eq!(
        refusal(&format!("TZ=\u{7}{long} Mon 09:00")),
        format!("schedule: unknown time zone \"{}…\"", "x".repeat(40))
    );
    let exactly_40 = "y".repeat(40);
    assert_eq!(refusal(&format!("{exactly_40} 09:00")), format!("schedule: unknown day \"{exactly_40}\""));
}

#[test]
fn a_refusal_splits_into_the_field_and_the_reason() {
    let e = Schedule::parse("Mon-Fri 25:00").unwrap_err();
    assert_eq!(e, ScheduleError::HourOutOfRange(25));
    assert_eq!(e.field(), "schedule");
    assert_eq!(e.reason(), "hour 25 out of range");
    assert_eq!(format!("{}: {}", e.field(), e.reason()), e.to_string());
    let e = Schedule::parse("TZ=Mars/Base Mon 09:00").unwrap_err();
    assert_eq!(e.reason(), "unknown time zone \"Mars/Base\"");
}

// ----- parsing: the parts -----

#[test]
fn a_range_that_passes_sunday_wraps_into_the_next_week() {
    let s = schedule("Fri-Mon 08:00");
    assert_eq!(weekdays(&s), [Weekday::Mon, Weekday::Fri, Weekday::Sat, Weekday::Sun]);
    assert_eq!(weekdays(&schedule("Sun-Mon 08:00")), [Weekday::Mon, Weekday::Sun]);
    assert_eq!(weekdays(&schedule("Sat-Tue 08:00")), [Weekday::Mon, Weekday::Tue, Weekday::Sat, Weekday::Sun]);
    assert_eq!(weekdays(&schedule("Tue-Mon 08:00")).len(), 7);
}

#[test]
fn comma_lists_join_days_and_ranges() {
    let s = schedule("Mon,Wed-Fri 07:15,12:00");
    assert_eq!(weekdays(&s), [Weekday::Mon, Weekday::Wed, Weekday::Thu, Weekday::Fri]);
    assert_eq!(s.times, [(7, 15), (12, 0)]);
    assert_eq!(weekdays(&schedule("Sat,Sun 10:30")), [Weekday::Sat, Weekday::Sun]);
    assert_eq!(
        weekdays(&schedule("Sat-Sun,Sun-Mon,Wed 10:30")),
        [Weekday::Mon, Weekday::Wed, Weekday::Sat, Weekday::Sun]
    );
}

#[test]
fn several_send_times_are_sorted_and_deduplicated() {
    let s = schedule("Mon 23:59,00:00,12:30,00:00,07:05");
    assert_eq!(s.times, [(0, 0), (7, 5), (12, 30), (23, 59)]);
    assert_eq!(s.to_string(), "TZ=UTC Mon 00:00,07:05,12:30,23:59");
}

#[test]
fn both_zone_prefixes_set_the_zone_and_no_prefix_means_utc() {
    assert_eq!(schedule("TZ=America/Los_Angeles Mon 09:00").zone(), Tz::America__Los_Angeles);
    assert_eq!(schedule("CRON_TZ=America/Los_Angeles Mon 09:00").zone(), Tz::America__Los_Angeles);
    assert_eq!(schedule("TZ=Pacific/Auckland Mon 09:00").zone_name(), "Pacific/Auckland");
    assert_eq!(schedule("Mon 09:00").zone(), Tz::UTC);
    assert_eq!(schedule("Mon 09:00").zone_name(), "UTC");
    assert_eq!(
        schedule("TZ=America/Los_Angeles Mon 09:00"),
        schedule("CRON_TZ=America/Los_Angeles Mon 09:00"),
        "the two spellings are one schedule"
    );
}

#[test]
fn zone_names_match_ignoring_case_and_no_two_zones_differ_only_by_case() {
    assert_eq!(schedule("TZ=AMERICA/NEW_YORK Mon 09:00").zone_name(), "America/New_York");
    let mut lowered: Vec<String> = chrono_tz::TZ_VARIANTS.iter().map(|z| z.name().to_ascii_lowercase()).collect();
    let all = lowered.len();
    lowered.sort();
    lowered.dedup();
    assert_eq!(lowered.len(), all, "a case-insensitive zone lookup would be ambiguous");
}

#[test]
fn display_round_trips_every_day_set() {
    let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    for set in 1u8..=EVERY_DAY {
        let list: Vec<&str> = (0..7).filter(|d| set & (1 << d) != 0).map(|d| names[d]).collect();
        let s = schedule(&format!("TZ=Europe/Berlin {} 06:30,18:00", list.join(",")));
        assert_eq!(s.days, set, "{}", list.join(","));
        let shown = s.to_string();
        assert_eq!(schedule(&shown), s, "{shown:?}");
        assert!(shown.len() <= Schedule::MAX_LEN);
    }
}

#[test]
fn from_str_is_parse() {
    let s: Schedule = "TZ=Europe/Berlin Mon 09:00".parse().unwrap();
    assert_eq!(s, schedule("TZ=Europe/Berlin Mon 09:00"));
    assert!("Mon 25:00".parse::<Schedule>().is_err());
}

// ----- firing -----

#[test]
fn the_next_send_is_strictly_after_the_instant_given() {
    let s = schedule("Mon-Fri 09:00,17:00");
    // 2025-06-02 is a Monday.
    assert_eq!(s.next_after(utc("2025-06-02T08:59:59Z")), utc("2025-06-02T09:00:00Z"));
    assert_eq!(s.next_after(utc("2025-06-02T09:00:00Z")), utc("2025-06-02T17:00:00Z"));
    assert_eq!(s.next_after(utc("2025-06-06T17:00:00Z")), utc("2025-06-09T09:00:00Z"), "Friday evening → Monday");
}

#[test]
fn a_wrapping_range_sends_over_the_weekend_and_skips_the_rest_of_the_week() {
    let s = schedule("TZ=Europe/Berlin Fri-Mon 08:00");
    // Thursday 2025-06-05 noon → Fri, Sat, Sun, Mon at 08:00 CEST (06:00 UTC), then Friday again.
    let sends = s.between(utc("2025-06-05T12:00:00Z"), utc("2025-06-13T12:00:00Z"));
    let expected = ["2025-06-06", "2025-06-07", "2025-06-08", "2025-06-09", "2025-06-13"]
        .map(|day| utc(&format!("{day}T06:00:00Z")));
    assert_eq!(sends, expected);
}

#[test]
fn a_schedule_sends_at_wall_clock_time_in_its_zone() {
    let s = schedule("TZ=America/Los_Angeles Mon-Fri 09:00,17:00");
    // Summer (PDT, UTC−7) and winter (PST, UTC−8).
    assert_eq!(s.next_after(utc("2025-07-01T00:00:00Z")), utc("2025-07-01T16:00:00Z"));
    assert_eq!(s.next_after(utc("2025-12-01T00:00:00Z")), utc("2025-12-01T17:00:00Z"));
    // Monday 09:00 in Los Angeles is still Monday there, though Monday 17:00 is Tuesday in UTC.
    assert_eq!(s.next_after(utc("2025-12-01T17:00:00Z")), utc("2025-12-02T01:00:00Z"));
    let india = schedule("TZ=Asia/Kolkata Mon 09:00");
    assert_eq!(india.next_after(utc("2025-06-01T00:00:00Z")), utc("2025-06-02T03:30:00Z"));
}

#[test]
fn the_local_weekday_decides_not_the_utc_one() {
    // Monday 06:00 in Auckland (NZST, UTC+12) is Sunday 18:00 UTC.
    let s = schedule("TZ=Pacific/Auckland Mon 06:00");
    assert_eq!(s.next_after(utc("2025-06-08T00:00:00Z")), utc("2025-06-08T18:00:00Z"));
}

/// One DST case: the schedule, the day before, and the one send expected that day.
fn assert_sends_once(spec: &str, day_before: &str, expected: &str) {
    let s = schedule(spec);
    let from = utc(day_before);
    let day_after = from + Duration::days(2);
    assert_eq!(s.between(from, day_after), [utc(expected)], "{spec} from {day_before}");
    assert_eq!(s.next_after(from), utc(expected));
}

#[test]
fn a_time_inside_the_spring_forward_gap_is_sent_once_when_the_gap_ends() {
    // Los Angeles, 2025-03-09: 02:00 PST becomes 03:00 PDT; 02:30 does not exist.
    assert_sends_once("TZ=America/Los_Angeles Sun 02:30", "2025-03-08T12:00:00Z", "2025-03-09T10:00:00Z");
    // Sydney, 2025-10-05: 02:00 AEST becomes 03:00 AEDT (UTC+11).
    assert_sends_once("TZ=Australia/Sydney Sun 02:30", "2025-10-04T00:00:00Z", "2025-10-04T16:00:00Z");
    // Auckland, 2025-09-28: 02:00 NZST becomes 03:00 NZDT (UTC+13).
    assert_sends_once("TZ=Pacific/Auckland Sun 02:30", "2025-09-27T00:00:00Z", "2025-09-27T14:00:00Z");
    // Berlin, 2025-03-30: 02:00 CET becomes 03:00 CEST (UTC+2).
    assert_sends_once("TZ=Europe/Berlin Sun 02:30", "2025-03-29T12:00:00Z", "2025-03-30T01:00:00Z");
}

#[test]
fn a_time_the_spring_forward_gap_skips_is_sent_in_the_zone_at_03_00_on_the_same_day() {
    let s = schedule("TZ=America/Los_Angeles Sun 02:30");
    let sent = s.next_after(utc("2025-03-08T12:00:00Z")).with_timezone(&s.zone());
    assert_eq!(sent.naive_local(), NaiveDate::from_ymd_opt(2025, 3, 9).unwrap().and_hms_opt(3, 0, 0).unwrap());
    // The week after, 02:30 exists again.
    let week_after = s.next_after(sent.with_timezone(&Utc)).with_timezone(&s.zone());
    assert_eq!(week_after.naive_local(), NaiveDate::from_ymd_opt(2025, 3, 16).unwrap().and_hms_opt(2, 30, 0).unwrap());
}

#[test]
fn a_time_repeated_by_the_fall_back_is_sent_once_at_its_first_occurrence() {
    // Los Angeles, 2025-11-02: 02:00 PDT becomes 01:00 PST; 01:30 happens at 08:30 and 09:30 UTC.
    assert_sends_once("TZ=America/Los_Angeles Sun 01:30", "2025-11-01T12:00:00Z", "2025-11-02T08:30:00Z");
    // Sydney, 2025-04-06: 03:00 AEDT becomes 02:00 AEST; 02:30 happens at 15:30 and 16:30 UTC.
    assert_sends_once("TZ=Australia/Sydney Sun 02:30", "2025-04-05T00:00:00Z", "2025-04-05T15:30:00Z");
    // Auckland, 2025-04-06: 03:00 NZDT becomes 02:00 NZST; 02:30 happens at 13:30 and 14:30 UTC.
    assert_sends_once("TZ=Pacific/Auckland Sun 02:30", "2025-04-05T00:00:00Z", "2025-04-05T13:30:00Z");
    // Berlin, 2025-10-26: 03:00 CEST becomes 02:00 CET; 02:30 happens at 00:30 and 01:30 UTC.
    assert_sends_once("TZ=Europe/Berlin Sun 02:30", "2025-10-25T12:00:00Z", "2025-10-26T00:30:00Z");
}

#[test]
fn the_second_occurrence_of_a_repeated_time_does_not_send_again() {
    let s = schedule("TZ=America/Los_Angeles Sun 01:30");
    // Between the two occurrences of 01:30 on 2025-11-02, the next send is a week later.
    assert_eq!(s.next_after(utc("2025-11-02T08:30:00Z")), utc("2025-11-09T09:30:00Z"));
    assert_eq!(s.next_after(utc("2025-11-02T09:29:59Z")), utc("2025-11-09T09:30:00Z"));
}

#[test]
fn send_times_that_the_gap_moves_onto_one_instant_are_one_send() {
    let s = schedule("TZ=America/Los_Angeles Sun 02:00,02:30,03:00");
    let on_the_day = s.between(utc("2025-03-08T12:00:00Z"), utc("2025-03-10T00:00:00Z"));
    assert_eq!(on_the_day, [utc("2025-03-09T10:00:00Z")]);
    let a_week_later = s.between(utc("2025-03-15T12:00:00Z"), utc("2025-03-17T00:00:00Z"));
    assert_eq!(a_week_later.len(), 3);
}

#[test]
fn a_gap_at_midnight_sends_on_the_same_local_day() {
    // Santiago, 2025-09-07: Saturday 24:00 (−04) becomes Sunday 01:00 (−03); Sunday 00:30 does not exist.
    let s = schedule("TZ=America/Santiago Sun 00:30");
    let sent = s.next_after(utc("2025-09-06T00:00:00Z"));
    assert_eq!(sent, utc("2025-09-07T04:00:00Z"));
    assert_eq!(sent.with_timezone(&s.zone()).date_naive(), NaiveDate::from_ymd_opt(2025, 9, 7).unwrap());
}

#[test]
fn a_day_the_zone_skipped_entirely_still_sends_once_when_the_gap_ends() {
    // Samoa skipped Friday 2011-12-30: Thursday 24:00 (−10) became Saturday 00:00 (+14).
    let s = schedule("TZ=Pacific/Apia daily 09:00");
    let sends = s.between(utc("2011-12-29T00:00:00Z"), utc("2011-12-31T12:00:00Z"));
    let local: Vec<String> =
        sends.iter().map(|at| at.with_timezone(&s.zone()).format("%a %Y-%m-%d %H:%M").to_string()).collect();
    assert_eq!(local, ["Thu 2011-12-29 09:00", "Sat 2011-12-31 00:00", "Sat 2011-12-31 09:00"]);
}

#[test]
fn between_is_exclusive_of_from_inclusive_of_to_and_in_order() {
    let s = schedule("Mon-Sun 09:00,17:00");
    let sends = s.between(utc("2025-06-02T09:00:00Z"), utc("2025-06-03T09:00:00Z"));
    assert_eq!(sends, [utc("2025-06-02T17:00:00Z"), utc("2025-06-03T09:00:00Z")]);
    assert!(s.between(utc("2025-06-03T09:00:00Z"), utc("2025-06-02T09:00:00Z")).is_empty());
    assert!(s.between(utc("2025-06-02T09:00:00Z"), utc("2025-06-02T09:00:00Z")).is_empty());
    assert!(s.between(utc("2025-06-02T09:00:01Z"), utc("2025-06-02T16:59:59Z")).is_empty());
}

#[test]
fn between_stops_at_its_bound_with_the_earliest_sends() {
    let hours: Vec<String> = (0..24).map(|h| format!("{h:02}:00")).collect();
    let s = schedule(&format!("daily {}", hours.join(",")));
    let from = utc("2025-01-01T00:00:00Z");
    let sends = s.between(from, utc("2026-01-01T00:00:00Z"));
    assert_eq!(sends.len(), Schedule::MAX_BETWEEN);
    assert_eq!(sends[0], utc("2025-01-01T01:00:00Z"));
    assert_eq!(sends[Schedule::MAX_BETWEEN - 1], from + Duration::hours(Schedule::MAX_BETWEEN as i64));
}

#[test]
fn the_end_of_time_answers_the_largest_instant_and_nothing_panics() {
    // Kiritimati is 14 hours ahead of UTC, Pago Pago 11 behind: both run off chrono's range.
    for zone in ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"] {
        let s = schedule(&format!("TZ={zone} daily 00:00,23:59"));
        let (min, max) = (DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC);
        assert_eq!(s.next_after(max), max, "{zone}");
        let last_days = s.between(max - Duration::days(3), max);
        assert!(last_days.len() <= 8 && !last_days.contains(&max), "{zone}: {last_days:?}");
        assert!(s.next_after(min) > min, "{zone}");
        assert!(s.between(min, min + Duration::days(3)).len() >= 4, "{zone}");
    }
}

// ----- the year walk -----

/// What a walk met: sends, and how many of them were in a gap or a repeated hour.
struct Walk {
    sends: usize,
    in_gap: usize,
    repeated: usize,
}

/// Walks a whole local year with `next_after` from its start and checks each send against
/// the calendar: one per matching local date and send time, in order, on that date, at
/// that wall-clock time — or, where the time is skipped, exactly at the gap's end; where it
/// is repeated, at the earlier occurrence.
fn walk_year(spec: &str, year: i32) -> Walk {
    let s = schedule(spec);
    let zone = s.zone();
    let local_midnight = |y: i32| {
        zone.from_local_datetime(&NaiveDate::from_ymd_opt(y, 1, 1).unwrap().and_hms_opt(0, 0, 0).unwrap())
            .earliest()
            .unwrap()
            .with_timezone(&Utc)
    };
    let (start, end) = (local_midnight(year) - Duration::seconds(1), local_midnight(year + 1) - Duration::seconds(1));

    let mut sends = Vec::new();
    let mut at = start;
    loop {
        let next = s.next_after(at);
        assert!(next > at, "{spec}: next_after({at}) = {next} is not later");
        if next > end {
            break;
        }
        sends.push(next);
        at = next;
    }

    let mut expected = Vec::new();
    let mut day = NaiveDate::from_ymd_opt(year, 1, 1).unwrap();
    while day.year() == year {
        if s.days & (1 << day.weekday().num_days_from_monday()) != 0 {
            for &(h, m) in &s.times {
                expected.push(day.and_time(NaiveTime::from_hms_opt(h.into(), m.into(), 0).unwrap()));
            }
        }
        day = day.succ_opt().unwrap();
    }
    assert_eq!(sends.len(), expected.len(), "{spec}: sends in {year}");

    let (mut in_gap, mut repeated) = (0, 0);
    for (sent, wall) in sends.iter().zip(&expected) {
        let local = sent.with_timezone(&zone);
        assert_eq!(local.date_naive(), wall.date(), "{spec}: {wall} was sent on another local day, at {local}");
        match zone.from_local_datetime(wall) {
            LocalResult::Single(only) => assert_eq!(local, only, "{spec}: {wall}"),
            LocalResult::Ambiguous(first, second) => {
                repeated += 1;
                assert_eq!(local, first.min(second), "{spec}: {wall} is repeated; the earlier one is sent");
            }
            LocalResult::None => {
                in_gap += 1;
                let just_before = (*sent - Duration::seconds(1)).with_timezone(&zone).naive_local();
                assert!(
                    just_before < *wall && local.naive_local() > *wall,
                    "{spec}: {wall} is skipped; sent at {local}, not where the gap ends"
                );
            }
        }
    }
    Walk { sends: sends.len(), in_gap, repeated }
}

#[test]
fn a_year_in_los_angeles_sends_every_time_once_through_both_dst_changes() {
    let walk = walk_year("TZ=America/Los_Angeles daily 01:30,02:30,09:00", 2025);
    assert_eq!(walk.sends, 365 * 3);
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
    let weekdays = walk_year("TZ=America/Los_Angeles Mon-Fri 09:00,17:00", 2025);
    assert_eq!(weekdays.sends, 261 * 2);
}

#[test]
fn a_year_in_sydney_sends_every_time_once_through_both_dst_changes() {
    let walk = walk_year("TZ=Australia/Sydney daily 02:30,12:00", 2025);
    assert_eq!(walk.sends, 365 * 2);
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
    let walk = walk_year("CRON_TZ=Australia/Sydney Fri-Mon 02:30", 2026);
    assert_eq!(walk.sends, 52 * 4, "2026 starts on a Thursday");
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
}

#[test]
fn a_year_in_auckland_sends_every_time_once_through_both_dst_changes() {
    let walk = walk_year("TZ=Pacific/Auckland Sun 02:30", 2025);
    assert_eq!(walk.sends, 52);
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
}

#[test]
fn a_year_in_berlin_sends_every_time_once_through_both_dst_changes() {
    let walk = walk_year("TZ=Europe/Berlin Mon,Wed-Fri,Sun 00:00,02:30,12:00,23:59", 2025);
    assert_eq!(walk.sends, (52 * 5 + 1) * 4, "2025 starts on a Wednesday");
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
}

#[test]
fn a_year_with_midnight_and_half_hour_changes_sends_every_time_once() {
    // Santiago changes at midnight; Lord Howe moves its clocks by half an hour.
    let walk = walk_year("TZ=America/Santiago daily 00:30,23:30", 2025);
    assert_eq!(walk.sends, 365 * 2);
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
    let walk = walk_year("TZ=Australia/Lord_Howe daily 01:45,02:15", 2025);
    assert_eq!(walk.sends, 365 * 2);
    assert_eq!((walk.in_gap, walk.repeated), (1, 1));
}

#[test]
fn a_year_without_dst_sends_every_time_once() {
    let walk = walk_year("Fri-Mon 00:00,23:59", 2024);
    assert_eq!(walk.sends, 209 * 2, "2024 is a leap year starting on a Monday");
    assert_eq!((walk.in_gap, walk.repeated), (0, 0));
    let walk = walk_year("TZ=Asia/Kolkata daily 05:30", 2025);
    assert_eq!(walk.sends, 365);
}

// ----- properties -----

const ZONES: [&str; 6] =
    ["UTC", "America/Los_Angeles", "Australia/Sydney", "Pacific/Auckland", "Europe/Berlin", "Australia/Lord_Howe"];

fn any_schedule() -> impl Strategy<Value = Schedule> {
    (0..ZONES.len(), 1u8..=EVERY_DAY, prop::collection::vec((0u8..24, 0u8..60), 1..6)).prop_map(
        |(zone, days, times)| {
            let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
            let days: Vec<&str> = (0..7).filter(|d| days & (1 << d) != 0).map(|d| names[d]).collect();
            let times: Vec<String> = times.iter().map(|(h, m)| format!("{h:02}:{m:02}")).collect();
            schedule(&format!("TZ={} {} {}", ZONES[zone], days.join(","), times.join(",")))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsing_any_text_never_panics_and_a_refusal_echoes_little(spec in "\\PC{0,80}|[ -~\\x00-\\x1f]{0,250}") {
        if let Err(e) = Schedule::parse(&spec) {
            let message = e.to_string();
            prop_assert!(message.starts_with("schedule: "));
            // At most 40 characters of the input, each escaped to at most 10 (`\u{10ffff}`).
            prop_assert!(message.chars().count() <= 120 + 40 * 10, "{message}");
            prop_assert!(!message.chars().any(char::is_control), "{message:?}");
        }
    }

    #[test]
    fn the_next_send_is_later_and_nothing_lies_between(s in any_schedule(), seconds in 1_577_836_800i64..1_893_456_000) {
        let after = DateTime::from_timestamp(seconds, 0).unwrap();
        let next = s.next_after(after);
        prop_assert!(next > after);
        prop_assert!(next - after <= Duration::days(8), "{s}: {after} → {next}");
        prop_assert_eq!(s.between(after, next), vec![next]);
        prop_assert_eq!(s.next_after(next - Duration::seconds(1)), next);
    }

    #[test]
    fn display_parses_back_to_the_same_schedule(s in any_schedule()) {
        prop_assert_eq!(schedule(&s.to_string()), s);
    }
}
