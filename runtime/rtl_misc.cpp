// Rtl bit helpers, large-integer arithmetic (RtlExtendedIntegerMultiply,
// RtlExtendedMagicDivide) and time fields (RtlTimeToTimeFields, RtlTimeFieldsToTime).
#include <wdm.h>

#include <cstdint>

namespace {

constexpr LONGLONG kTicksPerMillisecond = 10'000;
constexpr LONGLONG kTicksPerDay = 24LL * 60 * 60 * 1000 * kTicksPerMillisecond;
// Days from 1601-01-01 to 1970-01-01.
constexpr LONGLONG kDaysFrom1601To1970 = 134'774;

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian), days since
// 1970-01-01.
LONGLONG days_from_civil(LONGLONG y, unsigned m, unsigned d) {
    y -= m <= 2;
    const LONGLONG era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<LONGLONG>(doe) - 719468;
}

void civil_from_days(LONGLONG z, LONGLONG &y, unsigned &m, unsigned &d) {
    z += 719468;
    const LONGLONG era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<LONGLONG>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
}

bool leap_year(LONGLONG y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

}  // namespace

extern "C" {

CCHAR NTAPI RtlFindLeastSignificantBit(ULONGLONG Set) {
    return Set == 0 ? static_cast<CCHAR>(-1) : static_cast<CCHAR>(__builtin_ctzll(Set));
}

CCHAR NTAPI RtlFindMostSignificantBit(ULONGLONG Set) {
    return Set == 0 ? static_cast<CCHAR>(-1) : static_cast<CCHAR>(63 - __builtin_clzll(Set));
}

ULONG NTAPI RtlNumberOfSetBitsUlongPtr(ULONG_PTR Target) {
    return static_cast<ULONG>(__builtin_popcountll(Target));
}

LARGE_INTEGER NTAPI RtlExtendedIntegerMultiply(LARGE_INTEGER Multiplicand, LONG Multiplier) {
    LARGE_INTEGER product;
    // Two's complement wrap-around, computed unsigned so that overflow is defined.
    product.QuadPart =
        static_cast<LONGLONG>(static_cast<ULONGLONG>(Multiplicand.QuadPart) *
                              static_cast<ULONGLONG>(static_cast<LONGLONG>(Multiplier)));
    return product;
}

LARGE_INTEGER NTAPI RtlExtendedMagicDivide(LARGE_INTEGER Dividend, LARGE_INTEGER MagicDivisor,
                                           CCHAR ShiftCount) {
    const bool negative = Dividend.QuadPart < 0;
    const ULONGLONG magnitude = negative ? 0 - static_cast<ULONGLONG>(Dividend.QuadPart)
                                         : static_cast<ULONGLONG>(Dividend.QuadPart);
    const unsigned __int128 product =
        static_cast<unsigned __int128>(magnitude) * static_cast<ULONGLONG>(MagicDivisor.QuadPart);
    ULONGLONG quotient = static_cast<ULONGLONG>(product >> 64);
    quotient >>= static_cast<unsigned>(ShiftCount) & 63;
    LARGE_INTEGER result;
    result.QuadPart =
        negative ? static_cast<LONGLONG>(0 - quotient) : static_cast<LONGLONG>(quotient);
    return result;
}

VOID NTAPI RtlTimeToTimeFields(PLARGE_INTEGER Time, PTIME_FIELDS TimeFields) {
    // Windows treats the time as unsigned 100 ns ticks since 1601.
    const auto ticks = static_cast<ULONGLONG>(Time->QuadPart);
    const auto days = static_cast<LONGLONG>(ticks / kTicksPerDay);
    ULONGLONG rest = ticks % kTicksPerDay;
    LONGLONG year;
    unsigned month;
    unsigned day;
    civil_from_days(days - kDaysFrom1601To1970, year, month, day);
    TimeFields->Year = static_cast<CSHORT>(year);
    TimeFields->Month = static_cast<CSHORT>(month);
    TimeFields->Day = static_cast<CSHORT>(day);
    TimeFields->Milliseconds = static_cast<CSHORT>((rest / kTicksPerMillisecond) % 1000);
    rest /= kTicksPerMillisecond * 1000;
    TimeFields->Second = static_cast<CSHORT>(rest % 60);
    TimeFields->Minute = static_cast<CSHORT>((rest / 60) % 60);
    TimeFields->Hour = static_cast<CSHORT>(rest / 3600);
    // 1601-01-01 was a Monday.
    TimeFields->Weekday = static_cast<CSHORT>((days + 1) % 7);
}

BOOLEAN NTAPI RtlTimeFieldsToTime(PTIME_FIELDS TimeFields, PLARGE_INTEGER Time) {
    const TIME_FIELDS &f = *TimeFields;
    static const int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (f.Year < 1601 || f.Month < 1 || f.Month > 12 || f.Day < 1 || f.Hour < 0 || f.Hour > 23 ||
        f.Minute < 0 || f.Minute > 59 || f.Second < 0 || f.Second > 59 || f.Milliseconds < 0 ||
        f.Milliseconds > 999) {
        return FALSE;
    }
    const int month_days = kDaysInMonth[f.Month - 1] + (f.Month == 2 && leap_year(f.Year) ? 1 : 0);
    if (f.Day > month_days) return FALSE;
    const LONGLONG days =
        days_from_civil(f.Year, static_cast<unsigned>(f.Month), static_cast<unsigned>(f.Day)) +
        kDaysFrom1601To1970;
    const LONGLONG seconds = ((static_cast<LONGLONG>(f.Hour) * 60) + f.Minute) * 60 + f.Second;
    Time->QuadPart = days * kTicksPerDay + seconds * 1000 * kTicksPerMillisecond +
                     static_cast<LONGLONG>(f.Milliseconds) * kTicksPerMillisecond;
    return TRUE;
}

}  // extern "C"
