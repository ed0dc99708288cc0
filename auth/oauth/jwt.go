package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgate/mcpgate"
)

// accessClaims are the claims of an access token.
type accessClaims struct {
	jwt.RegisteredClaims
	ClientID string   `json:"client_id"`
	Scope    string   `json:"scope"`
	Agents   []string `json:"agents"`
	Family   string   `json:"fid"`
	Grant    string   `json:"gid"`
}

// tokenFamily is what an access token is issued from.
type tokenFamily struct {
	family   *mcpgate.OAuthFamily
	resource string
	scope    string
	agents   []string
}

// signAccessToken returns an HS256 JWT for the family, signed with the
// newest key, expiring after AccessTTL.
func (s *Server) signAccessToken(tf *tokenFamily) (string, error) {
	now := s.opts.Now()
	c := &accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.base,
			Subject:   tf.family.UserID,
			Audience:  jwt.ClaimStrings{tf.resource},
			ExpiresAt: jwt.NewNumericDate(now.Add(s.opts.AccessTTL)),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        mcpgate.NewID("at_"),
		},
		ClientID: tf.family.ClientID, Scope: tf.scope, Agents: tf.agents,
		Family: tf.family.ID, Grant: tf.family.GrantID,
	}
	key := s.keys.signing()
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["kid"] = key.ID
	signed, err := t.SignedString(key.Secret)
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return signed, nil
}

// parseAccessToken checks an access token's signature (HS256 only: "none"
// and every other algorithm are refused), issuer and times, and returns
// its claims. With expired true it accepts expired tokens, for revocation.
func (s *Server) parseAccessToken(ctx context.Context, token string, expired bool) (*accessClaims, error) {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(s.base), jwt.WithTimeFunc(s.opts.Now), jwt.WithLeeway(5 * time.Second),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithStrictDecoding(),
	}
	if expired {
		opts = []jwt.ParserOption{jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithoutClaimsValidation()}
	}
	var c accessClaims
	_, err := jwt.NewParser(opts...).ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, ok := s.keys.find(ctx, kid)
		if !ok {
			return nil, errors.New("unknown signing key")
		}
		return key.Secret, nil
	})
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token expired; refresh it or sign in again")
	case err != nil:
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token is invalid")
	case expired && c.Issuer != s.base:
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token was not issued here")
	}
	return &c, nil
}
