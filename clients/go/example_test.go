package scriptorium_test

import (
	"context"
	"fmt"
	"time"

	scriptorium "scriptorium/clients/go"
	pb "scriptorium/clients/go/scriptoriumv1"
)

// The example of docs/clients.md, compiled by go test (it has no output to check, so it is not
// run: it needs a daemon on $SCRIPTORIUM_TARGET).
func Example() {
	ctx := context.Background()
	client, err := scriptorium.New("", scriptorium.WithTimeout(10*time.Second)) // $SCRIPTORIUM_TARGET
	if err != nil {
		panic(err)
	}
	defer client.Close()
	found, err := client.Search(ctx, &pb.SearchRequest{Query: "declare path parameters", TopK: 3})
	if err != nil || len(found.Results) == 0 {
		panic(err)
	}
	page, err := client.GetByRef(ctx, found.Results[0].RefId, pb.ContentMode_CONTENT_MODE_FULL)
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Content)
	_, err = client.GetByLocation(ctx, "tutorial/no-such-page", pb.ContentMode_CONTENT_MODE_FULL)
	if e, ok := scriptorium.AsError(err); ok && e.Resolution != nil {
		fmt.Println(e.Code, e.Resolution.Reason, e.Resolution.Candidates) // NotFound not_found []
	}
}
