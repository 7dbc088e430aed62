/**
 * Listgate settings page: polls the pairing while the administrator
 * approves it in Listgate. The server does the talking to Listgate and
 * enforces the interval itself; this only asks it every `interval`
 * seconds and shows what it says.
 */
( function () {
	'use strict';

	var config = window.listgateAdmin;
	var box = document.getElementById( 'listgate-pairing' );
	if ( ! config || ! box ) {
		return;
	}
	var statusEl = document.getElementById( 'listgate-pairing-status' );
	var interval = parseInt( box.getAttribute( 'data-interval' ), 10 ) || 5;
	var stopped = false;
	var failures = 0;

	function show( text ) {
		if ( statusEl && text ) {
			statusEl.textContent = text;
		}
	}

	function schedule( seconds ) {
		if ( stopped ) {
			return;
		}
		// A little past the interval, so network jitter never makes a poll early.
		window.setTimeout( poll, Math.max( 1, seconds ) * 1000 + 250 );
	}

	function stop( text ) {
		stopped = true;
		box.classList.add( 'listgate-pairing-ended' );
		show( text );
		// The code is of no use any more: offer to start again instead.
		box.querySelectorAll( '.listgate-pairing-live' ).forEach( function ( el ) {
			el.hidden = true;
		} );
		var restart = box.querySelector( '.listgate-pairing-restart' );
		if ( restart ) {
			restart.hidden = false;
		}
	}

	function handle( data ) {
		switch ( data.status ) {
			case 'connected':
				stopped = true;
				show( data.message || config.i18n.connected );
				window.location.reload();
				return;
			case 'pending':
			case 'wait':
				show( data.message || config.i18n.waiting );
				schedule( data.retry_in || data.interval || interval );
				return;
			case 'slow_down':
				// RFC 8628: the interval grows by 5 seconds for every later poll.
				interval = data.interval || interval + 5;
				box.setAttribute( 'data-interval', String( interval ) );
				show( data.message || config.i18n.waiting );
				schedule( interval );
				return;
			default:
				// denied, expired, none, error.
				stop( data.message || config.i18n.failed );
		}
	}

	function poll() {
		if ( stopped ) {
			return;
		}
		var body = new URLSearchParams();
		body.append( 'action', 'listgate_pairing_poll' );
		body.append( '_ajax_nonce', config.nonce );
		window.fetch( config.ajaxUrl + '?action=listgate_pairing_poll', {
			method: 'POST',
			credentials: 'same-origin',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' },
			body: body.toString()
		} ).then( function ( response ) {
			return response.json();
		} ).then( function ( data ) {
			if ( ! data || 'string' !== typeof data.status ) {
				throw new Error( 'unexpected answer' );
			}
			failures = 0;
			handle( data );
		} ).catch( function () {
			// WordPress itself did not answer sensibly: try twice more, then give up.
			failures++;
			if ( failures >= 3 ) {
				stop( config.i18n.failed );
				return;
			}
			schedule( interval );
		} );
	}

	schedule( interval );
}() );
