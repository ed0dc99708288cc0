package csvq

import (
	"fmt"
	"math/rand/v2"
)

// Sample returns the built-in dataset: 1200 orders of a small shop, with
// order_id, date, region, product, units, unit_price and amount. It is
// the same on every call.
func Sample() *Table {
	regions := []string{"EU", "US", "APAC", "LATAM"}
	products := []string{"Widget", "Gadget", "Gizmo", "Doohickey", "Sprocket"}
	prices := []float64{4.5, 12, 25, 7.25, 2.1}
	rng := rand.New(rand.NewPCG(6, 2026))
	t := &Table{Name: "sample-orders.csv", Columns: []string{"order_id", "date", "region", "product", "units", "unit_price", "amount"}}
	for i := range 1200 {
		p := rng.IntN(len(products))
		units := 1 + rng.IntN(40)
		t.Rows = append(t.Rows, []string{
			fmt.Sprintf("A%04d", i+1),
			fmt.Sprintf("2025-%02d-%02d", 1+i*12/1200, 1+rng.IntN(28)),
			regions[rng.IntN(len(regions))],
			products[p],
			fmt.Sprint(units),
			fmt.Sprint(prices[p]),
			fmt.Sprintf("%.2f", float64(units)*prices[p]),
		})
	}
	return t
}
