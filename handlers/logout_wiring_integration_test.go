//go:build integration

package handlers

import "github.com/clusterdesk/clusterdesk/internal/kube"

// wireUsers gives the console the per-user clients cache it empties at logout.
func wireUsers(d *Deps, u *kube.Users) { d.Users = u }

// clientsKept is how many identities' clients the cache holds.
func clientsKept(u *kube.Users) int { return u.Kept() }
