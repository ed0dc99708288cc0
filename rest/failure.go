package rest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
)

// failure maps an error of sending a request or reading its response to a
// result naming what went wrong and the host, never the query, with its
// Failure set when the API did not answer in time or could not be reached.
// A call the caller canceled is an ECANCELED error instead.
func failure(ctx context.Context, host string, timeout time.Duration, err error) (*mcpgate.Result, error) {
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, mcpgate.Errorf(mcpgate.ECANCELED, "the call was canceled")
	}
	res := mcpgate.ErrorResult("%s", describe(host, timeout, err))
	res.Failure = failureCode(err)
	return res, nil
}

// failureCode is ETIMEOUT for a request that ran out of time, EUNAVAILABLE
// for an API that could not be reached (refused, reset, unreachable, no
// such host), and "" for any other failure, such as an SSRF refusal or a
// TLS error, which a retry would meet again.
func failureCode(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return ""
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return mcpgate.ETIMEOUT
	case errors.As(err, &dns), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return mcpgate.EUNAVAILABLE
	}
	return ""
}

// describe says in a sentence why a request to host failed.
func describe(host string, timeout time.Duration, err error) string {
	var (
		blocked *netguard.BlockedError
		dns     *net.DNSError
		cert    *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case errors.As(err, &blocked):
		return blockedMessage(host, blocked)
	case errors.Is(err, netguard.ErrTooManyRedirects):
		return fmt.Sprintf("Request to %s failed: %v.", host, netguard.ErrTooManyRedirects)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Sprintf("Request to %s timed out after %s.", host, timeout)
	case errors.As(err, &dns):
		return fmt.Sprintf("DNS lookup of %s failed: %s.", dns.Name, dns.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("Connection to %s refused.", host)
	case errors.As(err, &cert):
		return fmt.Sprintf("TLS failure with %s: %v.", host, cert.Err)
	case errors.As(err, &record), errors.As(err, &alert):
		return fmt.Sprintf("TLS failure with %s: %v.", host, innerError(err))
	}
	return fmt.Sprintf("Request to %s failed: %v.", host, innerError(err))
}

// blockedMessage explains an SSRF refusal and, when the skill could lift
// it, how.
func blockedMessage(host string, blocked *netguard.BlockedError) string {
	msg := fmt.Sprintf("Request to %s refused: %v", host, blocked)
	if blocked.Overridable() {
		msg += "; set allow_private: true on the skill to allow it"
	}
	return msg + "."
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// innerError returns the error inside a *url.Error, whose own text quotes
// the whole URL, query included.
func innerError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
