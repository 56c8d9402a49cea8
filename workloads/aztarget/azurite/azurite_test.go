package azurite_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
)

func TestStart(t *testing.T) {
	_, cs := azurite.Start(t)
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "probe", nil); err != nil {
		t.Fatal(err)
	}
}
