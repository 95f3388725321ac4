package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/apikey"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// KeyView answers the creation of an API key: the only time the key is shown.
type KeyView struct {
	KeyID     string    `json:"key_id"`
	TenantID  string    `json:"tenant_id"`
	Key       string    `json:"key"`
	CreatedAt time.Time `json:"created_at"`
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	var in struct {
		TenantID *string `json:"tenant_id"`
		Name     string  `json:"name"`
	}
	if p := decode(w, r, &in); p != nil {
		return p
	}
	var errs []FieldError
	if in.TenantID != nil && !validTenantID(*in.TenantID) {
		errs = append(errs, FieldError{Field: "tenant_id", Message: "must be 1 to 64 letters, digits, _ or -"})
	}
	if len(in.Name) > 256 {
		errs = append(errs, FieldError{Field: "name", Message: "is over 256 bytes"})
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	id := ""
	if in.TenantID != nil {
		id = *in.TenantID
	} else {
		var err error
		if id, err = s.newID("tn_"); err != nil {
			return s.internal(r, err)
		}
	}
	t, err := s.Store.CreateTenant(r.Context(), domain.Tenant{TenantID: id, Name: in.Name})
	if errors.Is(err, store.ErrExists) {
		return problem(http.StatusConflict, "tenant %q already exists", id)
	}
	if err != nil {
		return s.internal(r, err)
	}
	writeJSON(w, http.StatusCreated, struct {
		TenantID  string    `json:"tenant_id"`
		Name      string    `json:"name"`
		CreatedAt time.Time `json:"created_at"`
	}{t.TenantID, t.Name, t.CreatedAt})
	return nil
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	tenant := r.PathValue("tenant_id")
	k, err := apikey.New(s.random())
	if err != nil {
		return s.internal(r, err)
	}
	stored, err := s.Store.PutAPIKey(r.Context(), domain.APIKey{KeyID: k.ID, TenantID: tenant, Hash: k.Hash})
	if err != nil {
		return s.found(r, "tenant "+strconv.Quote(tenant), err)
	}
	writeJSON(w, http.StatusCreated, KeyView{KeyID: k.ID, TenantID: tenant, Key: k.Plain, CreatedAt: stored.CreatedAt})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	tenant, keyID := r.PathValue("tenant_id"), r.PathValue("key_id")
	if err := s.Store.RevokeAPIKey(r.Context(), tenant, keyID); err != nil {
		return s.found(r, "key "+strconv.Quote(keyID)+" of tenant "+strconv.Quote(tenant), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
