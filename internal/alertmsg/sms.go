package alertmsg

// The GSM 03.38 basic character set and its extension table (each extension
// character takes two septets).
const (
	gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExt   = "^{}\\[~]|€\f"
)

var gsmBasicSet, gsmExtSet = runeSet(gsmBasic), runeSet(gsmExt)

func runeSet(s string) map[rune]bool {
	m := map[rune]bool{}
	for _, r := range s {
		m[r] = true
	}
	return m
}

// SMS encodings.
const (
	GSM7 = "GSM-7"
	UCS2 = "UCS-2"
)

// SMSInfo returns the encoding a text needs, its length in that encoding's
// units (septets for GSM-7, UTF-16 code units for UCS-2) and the number of
// segments it takes: 160 septets or 70 units in one segment, 153 or 67 per
// segment when concatenated.
func SMSInfo(text string) (encoding string, units, segments int) {
	septets := 0
	gsm := true
	for _, r := range text {
		switch {
		case gsmBasicSet[r]:
			septets++
		case gsmExtSet[r]:
			septets += 2
		default:
			gsm = false
		}
		if !gsm {
			break
		}
	}
	if gsm {
		return GSM7, septets, segmentsFor(septets, 160, 153)
	}
	for _, r := range text {
		if r > 0xFFFF {
			units += 2
		} else {
			units++
		}
	}
	return UCS2, units, segmentsFor(units, 70, 67)
}

func segmentsFor(n, single, multi int) int {
	if n == 0 {
		return 1
	}
	if n <= single {
		return 1
	}
	return (n + multi - 1) / multi
}
