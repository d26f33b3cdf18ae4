package decoder_test

import (
	"fmt"

	"github.com/shellsup/shellsup/decoder"
)

func ExampleDecoder() {
	var d decoder.Decoder
	var text []byte
	// "€" split across two reads, then an invalid byte, then a sequence cut short by EOF.
	for _, read := range [][]byte{[]byte("price: \xE2\x82"), []byte("\xAC5 \xFF ok \xF0\x9F")} {
		text = d.Decode(text, read)
	}
	text = d.Flush(text)
	fmt.Printf("%+q\n", text)
	// Output: "price: \u20ac5 \ufffd ok \ufffd"
}

func ExampleCapture_WriteFunc() {
	c, err := decoder.NewCapture(100) // room for 48 bytes of text plus the 52-byte marker
	if err != nil {
		panic(err)
	}
	forward := func(s decoder.Stream, text string) { fmt.Printf("%s: %q\n", s, text) }
	c.WriteFunc(decoder.Stdout, []byte("building...\n"), forward)
	c.WriteFunc(decoder.Stderr, []byte("warning: this line is long enough to overflow\n"), forward)
	c.WriteFunc(decoder.Stdout, []byte("done\n"), forward) // spent: counted, not captured
	t := c.Totals()
	fmt.Println(t.Truncated, t.TotalBytes, t.CapturedBytes)
	// Output:
	// stdout: "building...\n"
	// stderr: "warning: this line is long enough to\n... output truncated at 100-byte capture limit ...\n"
	// true 63 100
}
